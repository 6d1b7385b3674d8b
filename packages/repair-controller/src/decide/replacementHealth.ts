/**
 * Whether a replacement is capacity yet (issue #41): kubelet Ready is not enough on GPU fleets, where a replacement
 * often comes up with a GPU missing or an agent condition False. Pure: the replacement's Node as the informer has
 * it and what the repair expects of it (fixed in the record when the repair started) in, a verdict out. The one
 * caller is the replacement gate (controller/replacementGate.ts), for every owner.
 */
import { CONDITION_TYPES } from "@nodemend/reason-codes"
import type { ControllerConfig } from "../config/ControllerConfig.ts"

export const GPU_RESOURCE = "nvidia.com/gpu"

/** What a repair expects of its replacement, kept in its record (RepairRecord.replacementExpects). */
export interface HealthExpectations {
  /** The agent's condition types that must be present and True. */
  readonly agentConditions: ReadonlyArray<string>
  /** The GPUs the replacement must have, in capacity and allocatable; absent: not a GPU pool. */
  readonly gpus?: number
  /** DCGM's active diagnostic the replacement's agent must pass (the pool's `replacementDiagnostic`). */
  readonly dcgmDiagnostic?: { readonly level: 1 | 2 | 3 | 4; readonly timeoutSeconds: number }
}

/** The parts of the replacement's Node the gate reads. */
export interface ReplacementNode {
  readonly conditions: ReadonlyArray<{
    readonly type: string
    readonly status: string
    readonly reason?: string
  }>
  readonly capacity: Readonly<Record<string, string>>
  readonly allocatable: Readonly<Record<string, string>>
}

export type HealthCheck = "AgentCondition" | "GpuCapacity" | "GpuAllocatable" | "DcgmDiagnostic"

export type ReplacementHealth =
  | { readonly _tag: "Healthy" }
  /** Not decided yet (not Ready, the agent or the device plugin has not reported): asked again within the bound. */
  | { readonly _tag: "Waiting"; readonly why: string }
  | { readonly _tag: "Unhealthy"; readonly check: HealthCheck; readonly why: string }

const count = (v: string | undefined): number | undefined => {
  if (v === undefined) return undefined
  const n = Number(v)
  return Number.isInteger(n) && n >= 0 ? n : undefined
}

const agentConditions = (node: ReplacementNode, expected: ReadonlyArray<string>): ReplacementHealth => {
  for (const type of expected) {
    const c = node.conditions.find((x) => x.type === type)
    // Absent is not Unknown (contract 2): the agent has not reported yet. Unknown: its monitor cannot tell yet.
    if (c === undefined) return { _tag: "Waiting", why: `the agent has not reported ${type}` }
    if (c.status === "Unknown") return { _tag: "Waiting", why: `${type} is Unknown` }
    if (c.status !== "True")
      return {
        _tag: "Unhealthy",
        check: "AgentCondition",
        why: `${type}=${c.status}${c.reason ? ` (${c.reason})` : ""}`
      }
  }
  return { _tag: "Healthy" }
}

/**
 * Every GPU there and usable: at least the expected count in capacity (more is no fault: the repaired node may have
 * lost a GPU from its capacity before the repair started), and all of it allocatable (the device plugin withholds
 * an unhealthy GPU from allocatable).
 */
const gpus = (node: ReplacementNode, expected: number): ReplacementHealth => {
  const capacity = node.capacity[GPU_RESOURCE]
  // The device plugin registers after kubelet is Ready: no figure yet is not a missing GPU.
  if (capacity === undefined) return { _tag: "Waiting", why: `no ${GPU_RESOURCE} capacity reported yet` }
  const cap = count(capacity)
  if (cap === undefined || cap < expected)
    return {
      _tag: "Unhealthy",
      check: "GpuCapacity",
      why: `${GPU_RESOURCE} capacity ${capacity}, expected ${expected}`
    }
  const allocatable = node.allocatable[GPU_RESOURCE]
  if (count(allocatable) !== cap)
    return {
      _tag: "Unhealthy",
      check: "GpuAllocatable",
      why: `${GPU_RESOURCE} allocatable ${allocatable ?? "none"} of capacity ${cap}`
    }
  return { _tag: "Healthy" }
}

/** Healthy = Ready, the expected agent conditions present and True, and on GPU pools every GPU there and usable. */
export const replacementHealth = (
  node: ReplacementNode | undefined,
  expects: HealthExpectations
): ReplacementHealth => {
  if (node === undefined) return { _tag: "Waiting", why: "its Node is not registered" }
  const ready = node.conditions.find((c) => c.type === "Ready")
  if (ready?.status !== "True") return { _tag: "Waiting", why: `Ready is ${ready?.status ?? "not reported"}` }
  const agent = agentConditions(node, expects.agentConditions)
  if (agent._tag !== "Healthy") return agent
  return expects.gpus === undefined || expects.gpus === 0 ? agent : gpus(node, expects.gpus)
}

/**
 * What a repair expects of its replacement, from the repaired node as the repair started: the agent's condition
 * types that the config's policies watch and that the agent reported on that node (absent is not Unknown: a
 * monitor not watching there, say the GPU monitor on a CPU node, never reports, so only those it managed are
 * expected), and its GPUs: the cloud's facts when they carry the count (kwok), else the node's capacity (not
 * allocatable: a dead GPU has already left the broken node's allocatable); and the DCGM diagnostic its proven pool
 * asks for, if any.
 */
export const healthExpectations = (
  config: ControllerConfig,
  old: {
    readonly conditionTypes: ReadonlyArray<string>
    readonly capacity: Readonly<Record<string, string>>
  },
  launch: Readonly<Record<string, string>>,
  pool?: string
): HealthExpectations => {
  const watched = new Set(config.policies.map((p) => p.conditionType))
  const agent: ReadonlyArray<string> = CONDITION_TYPES
  const agentConditions = agent.filter((t) => watched.has(t) && old.conditionTypes.includes(t))
  const gpus = count(launch[GPU_RESOURCE]) ?? count(old.capacity[GPU_RESOURCE])
  const diagnostic = pool === undefined ? undefined : config.pools[pool]?.replacementDiagnostic
  return {
    agentConditions,
    ...(gpus !== undefined && gpus > 0 ? { gpus } : {}),
    ...(diagnostic !== undefined
      ? { dcgmDiagnostic: { level: diagnostic.dcgmLevel, timeoutSeconds: diagnostic.timeoutSeconds } }
      : {})
  }
}
