export declare function isCached(dir?: string): boolean
export declare function build(): Promise<string>
export declare function fmt(ms: number): string
export declare function goEnv(): NodeJS.ProcessEnv
export declare function run(
  label: string,
  cmd: string,
  args: ReadonlyArray<string>,
  opts: import("node:child_process").SpawnOptions,
  say?: (msg: string) => void
): Promise<number>
export declare function acquireLock(lockDir: string, say?: (msg: string) => void): Promise<void>
export declare function k8sLdflags(): string
