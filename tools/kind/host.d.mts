export interface HostState {
  sysctls: Record<string, string>
  chains: string[]
  libModules: boolean
  etcCni?: boolean
  cgroups: string[]
  netns: string[]
  runNetns?: { exists: boolean; mounted: boolean }
}
export interface ChangedSysctl {
  key: string
  path: string
  was: string
  now: string
}
export declare function readSysctls(root?: string): Record<string, string>
export declare function changedSysctls(
  before: Record<string, string>,
  now: Record<string, string>
): ChangedSysctl[]
export declare function recordHostState(file: string, before?: { etcCni?: boolean }): HostState
export declare const readHostState: (file: string) => HostState | undefined
export declare function ensureLibModules(): void
export declare function restoreHost(state: HostState, podmanDirs: string[]): string[]
export declare function leftovers(state: HostState, podmanDirs: string[]): string[]
