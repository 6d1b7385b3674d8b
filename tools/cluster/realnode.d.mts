// Types for realnode.mjs (the local cluster's opt-in real node).
export declare const NODE_NAME: string
export declare const NODE_IP: string
export declare const BRIDGE: string
export declare const POD_SUBNET: string
export declare const PAUSE_IMAGE: string
export declare function nodePaths(stateDir: string): {
  root: string
  pids: string
  logs: string
  containerd: string
  sock: string
  kubelet: string
  podLogs: string
  cni: string
  config: string
  hostState: string
}
export declare function leftovers(stateDir: string): string[]
/** Stops the real node of `stateDir` and undoes its host changes; returns what it could not undo. */
export declare function stopRealNode(
  stateDir: string,
  bin: string | null,
  opts?: { quiet?: boolean }
): Promise<string[]>
/** What the last `down` of `stateDir`'s real node could not undo (logs/real-node-down.json), or undefined. */
export declare function lastDownLeftovers(stateDir: string): string[] | undefined
