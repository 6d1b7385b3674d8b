/**
 * The one place that decides a replacement is capacity (issue #41), for every owner: the owner says when its
 * replacement is up (kubelet Ready, and for Karpenter its NodeClaim Initialized); the health gate
 * (decide/replacementHealth.ts) then says whether it is healthy, within `replacement.healthTimeoutSeconds` of its
 * first Ready. Until it is, no pod moves. On a pool that asks for it, a replacement healthy by every other check
 * then passes DCGM's diagnostic, run by its own agent (actions/replacementDiagnostic.ts).
 */
import { Clock, Effect } from "effect"
import type { Node } from "@nodemend/kube-access"
import type { CloudProvider } from "../cloud/CloudProvider.ts"
import type { KubeShape } from "../kube/Kube.ts"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import {
  type HealthExpectations,
  type ReplacementHealth,
  type ReplacementNode,
  replacementHealth
} from "../decide/replacementHealth.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { EventRecorder } from "../kube/EventRecorder.ts"
import { type CachedNodes, nodeEvent } from "../kube/stepPorts.ts"
import { fact, type Outcome, wait } from "../repair/outcome.ts"
import { diagnosticHealth } from "./replacementDiagnostic.ts"

const POLL_MS = 2000

export interface GatePorts {
  readonly cache: CachedNodes
  readonly events: EventRecorder
  readonly config: ControllerConfig
  readonly cloud: Pick<CloudProvider["Service"], "promisedGpus">
  /** Asks a replacement's agent for a DCGM diagnostic where the pool wants one; without it such a pool fails closed. */
  readonly kube?: Pick<KubeShape, "http">
}

const strings = (o: unknown): Record<string, string> =>
  typeof o === "object" && o !== null
    ? Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]))
    : {}

/** The parts of a Node the gate reads. */
export const replacementNodeOf = (n: Node | undefined): ReplacementNode | undefined =>
  n === undefined
    ? undefined
    : {
        conditions: (n.status?.conditions ?? []).map((c) => ({
          type: c.type,
          status: c.status,
          ...(c.reason !== undefined ? { reason: c.reason } : {})
        })),
        capacity: strings(n.status?.capacity),
        allocatable: strings(n.status?.allocatable)
      }

const isReady = (node: ReplacementNode | undefined) =>
  node?.conditions.some((c) => c.type === "Ready" && c.status === "True") === true

/**
 * The verdict on the replacement `nodeName`. Where the cloud proves what a machine's type promises (AWS), the GPUs
 * required are that promise, asked once the replacement is Ready: the record's figure (the repaired node's
 * capacity) could itself be short a GPU. Until the cloud knows the machine, or while it cannot answer, the
 * replacement waits (within the gate's bound).
 */
const healthOf = (
  ports: GatePorts,
  nodeName: string,
  expects: HealthExpectations
): Effect.Effect<ReplacementHealth> =>
  Effect.gen(function* () {
    const node = replacementNodeOf(ports.cache.get(nodeName))
    const promisedGpus = ports.cloud.promisedGpus
    if (promisedGpus === undefined || !isReady(node)) return replacementHealth(node, expects)
    const promise = yield* promisedGpus(nodeName).pipe(Effect.result)
    if (promise._tag === "Failure")
      return {
        _tag: "Waiting",
        why: `the cloud could not say what its type promises: ${promise.failure.message}`
      }
    const p = promise.success
    if (p === undefined) return { _tag: "Waiting", why: "the cloud does not know its machine yet" }
    const health = replacementHealth(node, { ...expects, gpus: p.gpus })
    return health._tag === "Unhealthy" && health.check !== "AgentCondition"
      ? { ...health, why: `${health.why} (${p.instanceType} promises ${p.gpus}, instance ${p.instanceId})` }
      : health
  })

/** The owner's answer to AwaitReplacement, through the health gate. */
export const gateReplacement = (
  ports: GatePorts,
  r: RepairRecord,
  owned: Outcome,
  healthTimesOutAt: number | undefined
): Effect.Effect<Outcome> =>
  Effect.gen(function* () {
    if (owned._tag !== "Fact" || owned.fact._tag !== "ReplacementReady") return owned
    const { nodeName, note } = owned.fact
    const ready = () =>
      note === undefined ? Effect.void : nodeEvent(ports.events, r, "Normal", "ReplacementReady", note)
    // Records from before the gate, and replacements no one node stands for (Karpenter provisioning for evicted
    // pods), are capacity when the owner says so.
    const expects = r.replacementExpects
    if (expects === undefined || nodeName === undefined) {
      yield* ready()
      return owned
    }
    const checked = yield* healthOf(ports, nodeName, expects)
    const health =
      checked._tag === "Healthy" && expects.dcgmDiagnostic !== undefined
        ? yield* diagnosticHealth(ports.kube?.http, r.id, nodeName, expects.dcgmDiagnostic)
        : checked
    if (health._tag === "Healthy") {
      yield* ready()
      return owned
    }
    const attemptsAllowed = ports.config.replacement.maxAttempts
    if (health._tag === "Unhealthy")
      return fact({
        _tag: "ReplacementUnhealthy",
        nodeName,
        check: health.check,
        why: health.why,
        attemptsAllowed
      })
    const now = yield* Clock.currentTimeMillis
    if (healthTimesOutAt !== undefined && now >= healthTimesOutAt)
      return fact({
        _tag: "ReplacementUnhealthy",
        nodeName,
        check: "Timeout",
        why: `not healthy within ${ports.config.replacement.healthTimeoutSeconds}s of Ready: ${health.why}`,
        attemptsAllowed
      })
    // Journals its first Ready (the bound counts from it), then asks again.
    const left = healthTimesOutAt === undefined ? POLL_MS : Math.min(POLL_MS, healthTimesOutAt - now)
    return wait(left, { _tag: "ReplacementUp" })
  })
