/**
 * What the core knows of a Karpenter NodePool, read by `karpenter/KarpenterCache.ts` from the API and judged by
 * `decide/` (the in-flight budget): plain data, so the decision never sees an API object.
 */

/** One of a NodePool's `spec.disruption.budgets` (`nodes` is a count or a percentage, as Karpenter takes it). */
export interface DisruptionBudget {
  readonly nodes: string
  readonly reasons?: ReadonlyArray<string>
  readonly schedule?: string
  readonly duration?: string
}

/** What the controller knows of a Karpenter NodePool: its NodeClaims, our veto on it, its disruption budgets. */
export interface NodePoolFacts {
  readonly claims: number
  readonly vetoed: boolean
  readonly budgets: ReadonlyArray<DisruptionBudget>
}
