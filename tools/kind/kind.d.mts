export interface KindInfo {
  provider: "docker" | "podman"
  image: string
  kubernetes: string
  kubeconfig: string
  fresh: boolean
  seconds: Record<string, number>
}
// biome-ignore lint/suspicious/noExplicitAny: the kind config is whatever deploy/kind/kind-config.yaml holds
export declare function kindConfig(base: any, opts: { cgroupV1: boolean; ownCni: boolean }): any
export declare const defaultStateDir: () => string
/** `chart`: install the chart (default true); `images`: load its images (default: as `chart`). */
export declare function up(opts?: { stateDir?: string; chart?: boolean; images?: boolean }): Promise<KindInfo>
export declare function down(opts?: { stateDir?: string }): Promise<string[]>
export declare function nodeExec(node: string, args: string[], input?: string): string
