/**
 * Reboot and wait for the node to come back: the machine stays, so this goes to the cloud provider, whoever
 * owns the machine.
 */
import { Clock, Effect, Metric } from "effect"
import type { CloudProvider } from "../cloud/CloudProvider.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { EventRecorder } from "../kube/EventRecorder.ts"
import { type CachedNodes, isReady, nodeEvent, refOf } from "../kube/stepPorts.ts"
import * as M from "../observability/metrics.ts"
import { fact, wait } from "../repair/outcome.ts"

const POLL_MS = 1000

export interface RebootPorts {
  readonly cloud: Pick<CloudProvider["Service"], "reboot">
  readonly cache: CachedNodes
  readonly events: EventRecorder
}

export const reboot = (env: RebootPorts, r: RepairRecord) =>
  Effect.gen(function* () {
    yield* nodeEvent(
      env.events,
      r,
      "Warning",
      "Rebooting",
      `rebooting the instance for ${r.conditionType}=${r.conditionStatus} (${r.reason})`
    )
    yield* env.cloud.reboot(refOf(r))
    return fact({ _tag: "RebootRequested" })
  })

export const awaitReboot = (
  env: RebootPorts,
  r: RepairRecord,
  settledAt: number,
  timesOutAt: number,
  /** The owner's word that no replacement can come from it: carried on the fact, for the state machine. */
  cannotReplace?: string
) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (now >= timesOutAt) {
      yield* nodeEvent(
        env.events,
        r,
        "Warning",
        "RepairEscalated",
        "the node did not come back from the reboot in time; replacing it"
      )
      yield* Metric.update(M.repairsEscalated, 1)
      return fact({ _tag: "RebootTimedOut", ...(cannotReplace !== undefined ? { cannotReplace } : {}) })
    }
    if (now < settledAt || !isReady(env.cache, r.node.name))
      return wait(Math.min(5000, Math.max(settledAt - now, POLL_MS)))
    const still =
      env.cache
        .get(r.node.name)
        ?.status?.conditions?.some((c) => c.type === r.conditionType && c.status === r.conditionStatus) ??
      false
    if (still) {
      yield* nodeEvent(
        env.events,
        r,
        "Warning",
        "RepairEscalated",
        `${r.conditionType} is still ${r.conditionStatus} after the reboot; replacing`
      )
      yield* Metric.update(M.repairsEscalated, 1)
    }
    return fact({
      _tag: "NodeBack",
      stillFailing: still,
      ...(cannotReplace !== undefined ? { cannotReplace } : {})
    })
  })
