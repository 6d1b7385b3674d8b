// Types for cluster.mjs (consumed by @nodemend/cluster-harness).
export declare const FAKE_NODE_LABEL: string
export declare const FAKE_NODE_VALUE: string
export interface ClusterInfo {
  server: string
  kubeconfig: string
  reused: boolean
  versions: { kubernetes: string; etcd: string; kwok: string }
  binDir: string
  ports: Record<string, number>
  fakeNodeLabel: string
  startedAt: string
  startupSeconds: number
  /** Whether the cluster runs the opt-in real node (realnode.mjs). */
  realNode?: boolean
  nodeBinDir?: string
  node?: { name: string; ip: string; phases: Record<string, number>; images: string[] }
}
export declare function defaultStateDir(): string
export declare function up(opts?: {
  stateDir?: string
  noBuild?: boolean
  realNode?: boolean
}): Promise<ClusterInfo>
export declare function importBuiltImages(stateDir?: string): string[]
export declare function down(opts?: {
  stateDir?: string
  purge?: boolean
  quiet?: boolean
}): Promise<string[]>
export declare function status(opts?: { stateDir?: string }): {
  stateDir: string
  info: Omit<ClusterInfo, "kubeconfig" | "reused"> | null
  running: { name: string; pid: number }[]
}
