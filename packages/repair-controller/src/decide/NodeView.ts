/**
 * The parts of a Node the decision core reads, with times as epoch milliseconds. Built from a Node by
 * `kube/nodeView.ts`; the core never sees API object types, so it stays pure and easy to test.
 */
export interface ConditionView {
  readonly type: string
  readonly status: string
  readonly reason?: string
  readonly message?: string
  /** Epoch ms; undefined when missing or unparseable. */
  readonly lastTransitionTime?: number
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
}
