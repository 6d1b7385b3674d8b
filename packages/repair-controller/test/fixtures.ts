import type { PolicyMatch } from "../src/decide/policyMatch.ts"
import type { ConditionView, NodeView } from "../src/domain/NodeView.ts"
import type { RepairRecord } from "../src/domain/RepairRecord.ts"
import { newRepairRecord } from "../src/repair/stateMachine.ts"

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
  toleratedFrom: expiresAt - 600_000,
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

/** A capacity-first repair of kwok node n1 (uid u1), begun at `startedAt`: its record as journaled at the start. */
export const startedKwokRepair = (startedAt: number): RepairRecord =>
  newRepairRecord(
    {
      id: "r1",
      match: xid79Match(startedAt, { captureLogs: false, capacityFirst: true }),
      node: {
        name: "n1",
        uid: "u1",
        providerID: "kwok://n1",
        labels: {},
        instance: { instanceId: "kwok://n1", state: "running", launch: {}, owner: { kind: "standalone" } }
      }
    },
    startedAt
  )
