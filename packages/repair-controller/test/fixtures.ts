import type { ConditionView, NodeView } from "../src/domain/NodeView.ts"

export const MIN = 60_000

export const node = (
  name: string,
  conditions: ReadonlyArray<ConditionView> = [],
  opts: { pool?: string; labels?: Record<string, string>; annotations?: Record<string, string> } = {}
): NodeView => ({
  name,
  providerID: `kwok://${name}`,
  labels: { ...(opts.pool !== undefined ? { "karpenter.sh/nodepool": opts.pool } : {}), ...opts.labels },
  annotations: opts.annotations ?? {},
  conditions,
  deleting: false
})

export const cond = (
  type: string,
  status: string,
  lastTransitionTime: number,
  reason = "Test"
): ConditionView => ({
  type,
  status,
  reason,
  lastTransitionTime
})
