// Types for cluster.mjs (consumed by @nodemend/cluster-harness).
export declare const FAKE_NODE_LABEL: string
export declare const FAKE_NODE_VALUE: string
/** FEATURE_GATES of the local Karpenter ("NodeRepair=true"). */
export declare const KARPENTER_FEATURE_GATES: string
/** Name of the KWOKNodeClass `up` creates for Karpenter's NodePools. */
export declare const KARPENTER_NODE_CLASS: string
/** The local Karpenter (kwok provider) when the cluster runs one (karpenter.mjs builds it). */
export interface KarpenterInfo {
  dir: string
  version: string
  featureGates: string
  nodeClass: string
  ports: { metricsPort: number; healthProbePort: number }
}
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
  karpenter?: KarpenterInfo
  /** The cluster's Prometheus (`--prometheus`; prometheus.mjs): its URL and the directory of its target files. */
  prometheus?: { url: string; targetsDir: string }
}
export declare function defaultStateDir(): string
export declare function up(opts?: {
  stateDir?: string
  noBuild?: boolean
  realNode?: boolean
  /**
   * Start Karpenter's kwok provider (default: unless NODEMEND_KARPENTER=0); built unless noBuild. "unused": neither
   * built nor started, and a running cluster is reused whether it runs Karpenter or not (the demo).
   */
  karpenter?: boolean | "unused"
  /** Start a real Prometheus with nodemend's rules (default: NODEMEND_PROMETHEUS=1); prometheus.mjs. */
  prometheus?: boolean
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
