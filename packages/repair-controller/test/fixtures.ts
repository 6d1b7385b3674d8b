import type { PolicyMatch } from "../src/decide/policyMatch.ts"
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

/** An expired XID 79 match (10 min toleration, force drain, 10 min deadline) at `expiresAt`, with overrides. */
export const xid79Match = (expiresAt: number, over: Partial<PolicyMatch> = {}): PolicyMatch => ({
  conditionType: "AcceleratedHardwareReady",
  status: "False",
  reason: "NvidiaXID79Error",
  message: "",
  lastTransitionTime: expiresAt - 600_000,
  tolerationMs: 600_000,
  expiresAt,
  action: "Replace",
  drainMode: "force",
  drainDeadlineMs: 600_000,
  captureLogs: true,
  capacityFirst: false,
  onNoCapacity: "removeFirst",
  actionSource: "catalog",
  ...over
})
