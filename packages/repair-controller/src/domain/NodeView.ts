/**
 * The parts of a Node the core reads, with times as epoch milliseconds. Built from a Node by `kube/views.ts`;
 * the core never sees API object types, so it stays pure and easy to test.
 */
export interface ConditionView {
  readonly type: string
  readonly status: string
  readonly reason?: string
  readonly message?: string
  /** Epoch ms; undefined when missing or unparseable. Written by whoever writes the condition: the node itself. */
  readonly lastTransitionTime?: number
  /**
   * Epoch ms: when the controller first saw this status with this lastTransitionTime (controller/SightingStore.ts; the
   * what-if replay's recording time). Undefined: not tracked (a condition no policy matches, or a test).
   */
  readonly firstSeen?: number
}

export interface NodeView {
  readonly name: string
  readonly uid?: string
  readonly providerID?: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  readonly conditions: ReadonlyArray<ConditionView>
  /** `metadata.deletionTimestamp` is set. */
  readonly deleting: boolean
  /** `metadata.creationTimestamp`, epoch ms: whether a node came up after a repair (decide/relapse.ts). */
  readonly createdAt?: number
}

/** The parts of a Node the cloud provider needs. */
export interface NodeRef {
  readonly name: string
  /** `spec.providerID`, e.g. `aws:///us-west-2a/i-0123456789abcdef0` or `kwok://node-1`. */
  readonly providerID: string
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
}
