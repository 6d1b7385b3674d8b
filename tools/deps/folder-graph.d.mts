/** `agent`: the node agent's graph (packages/agent/src) instead of the repair controller's. */
export declare function folderGraph(options?: {
  readonly counts?: boolean
  readonly agent?: boolean
}): string[]
