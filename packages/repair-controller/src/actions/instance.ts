/** The cloud steps: reboot, terminate, remove the Node, launch the replacement and wait for it. */
import { Clock, Effect, Metric, Ref } from "effect"
import type { CloudError } from "../cloud/CloudProvider.ts"
import type { ActionEnv } from "./ActionEnv.ts"
import { shiftedZones } from "../decide/zonalShiftGate.ts"
import * as M from "../observability/metrics.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { fact, isReady, nodeEvent, refOf, wait } from "./step.ts"

const POLL_MS = 1000
const INSTANCE_POLL_MS = 2000

export const reboot = (env: ActionEnv, r: RepairRecord) =>
  Effect.gen(function* () {
    yield* nodeEvent(
      env,
      r,
      "Warning",
      "Rebooting",
      `rebooting the instance for ${r.conditionType}=${r.conditionStatus} (${r.reason})`
    )
    yield* env.cloud.reboot(refOf(r))
    return fact({ _tag: "RebootRequested" })
  })

export const awaitReboot = (env: ActionEnv, r: RepairRecord, settledAt: number, timesOutAt: number) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (now >= timesOutAt) {
      yield* nodeEvent(
        env,
        r,
        "Warning",
        "RepairEscalated",
        "the node did not come back from the reboot in time; replacing it"
      )
      yield* Metric.update(M.repairsEscalated, 1)
      return fact({ _tag: "RebootTimedOut" })
    }
    if (now < settledAt || !isReady(env, r.node.name))
      return wait(Math.min(5000, Math.max(settledAt - now, POLL_MS)))
    const still =
      env.cache
        .get(r.node.name)
        ?.status?.conditions?.some((c) => c.type === r.conditionType && c.status === r.conditionStatus) ??
      false
    if (still) {
      yield* nodeEvent(
        env,
        r,
        "Warning",
        "RepairEscalated",
        `${r.conditionType} is still ${r.conditionStatus} after the reboot; replacing`
      )
      yield* Metric.update(M.repairsEscalated, 1)
    }
    return fact({ _tag: "NodeBack", stillFailing: still })
  })

export const terminate = (env: ActionEnv, r: RepairRecord) =>
  Effect.gen(function* () {
    const state = yield* env.cloud.describe(refOf(r))
    if (state === "terminated" || state === "not-found") return fact({ _tag: "InstanceGone" })
    if (state === "shutting-down") return fact({ _tag: "TerminateRequested" })
    yield* env.events.emitNow({
      node: { name: r.node.name, uid: r.node.uid },
      type: "Warning",
      reason: "TerminatingInstance",
      action: "Terminate",
      note: `terminating ${r.node.instance.instanceId} through ${env.cloud.name}`
    })
    yield* Metric.update(Metric.withAttributes(M.terminations, { provider: env.cloud.name }), 1)
    // Capacity first (or a group already grown for it): the replacement is up, so a group shrinks back.
    const replaced = r.order === "capacityFirst" || r.replacement?.desiredCapacity !== undefined
    const after = yield* env.cloud.terminate(refOf(r), { replaced })
    return fact(
      after === "terminated" || after === "not-found"
        ? { _tag: "InstanceGone" }
        : { _tag: "TerminateRequested" }
    )
  })

export const awaitInstanceGone = (env: ActionEnv, r: RepairRecord) =>
  Effect.gen(function* () {
    const state = yield* env.cloud.describe(refOf(r))
    if (state !== "terminated" && state !== "not-found") return wait(INSTANCE_POLL_MS)
    yield* nodeEvent(env, r, "Normal", "InstanceTerminated", "the instance is gone")
    return fact({ _tag: "InstanceGone" })
  })

export const deleteNode = (env: ActionEnv, r: RepairRecord) =>
  env.kube.deleteNode(r.node.name, r.node.uid).pipe(
    Effect.catchTag("KubeError", (e) => (e.code === 404 || e.code === 409 ? Effect.void : Effect.fail(e))),
    Effect.as(fact({ _tag: "NodeRemoved" }))
  )

const askForReplacement = (env: ActionEnv, r: RepairRecord) =>
  Effect.gen(function* () {
    const avoidZones = shiftedZones(yield* Ref.get(env.shifts), yield* Clock.currentTimeMillis)
    const requestedAtMs =
      r.replacementRequestedAt === undefined ? undefined : Date.parse(r.replacementRequestedAt)
    const replacement = yield* env.cloud.launchReplacement(refOf(r), {
      facts: r.node.instance,
      avoidZones,
      idempotencyToken: r.id,
      capacityFirst: r.order === "capacityFirst",
      ...(r.replacement !== undefined ? { previous: r.replacement } : {}),
      ...(requestedAtMs !== undefined ? { requestedAtMs } : {})
    })
    env.launched.add(r.id)
    return replacement
  })

/** Capacity first, a replacement the owner refuses (capacity, limits) is the policy's fallback, not a failure. */
const unavailableIfCapacityFirst = (r: RepairRecord) => (e: CloudError) =>
  r.order === "capacityFirst" && !e.retryable
    ? Effect.succeed(fact({ _tag: "ReplacementUnavailable", why: `${e.operation}: ${e.message}` }))
    : Effect.fail(e)

export const launchReplacement = (env: ActionEnv, r: RepairRecord) =>
  Effect.gen(function* () {
    const replacement = yield* askForReplacement(env, r)
    yield* nodeEvent(
      env,
      r,
      "Normal",
      "LaunchingReplacement",
      `replacement ${replacement.nodeName ?? replacement.instanceId ?? `in Auto Scaling group ${replacement.autoScalingGroup ?? "?"}`} requested`
    )
    return fact({ _tag: "ReplacementLaunched", replacement })
  }).pipe(Effect.catchTag("CloudError", unavailableIfCapacityFirst(r)))

export const awaitReplacement = (env: ActionEnv, r: RepairRecord, timesOutAt: number) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const rep = r.replacement
    const name =
      rep?.nodeName ??
      env.cache
        .names()
        .find((n) => env.cache.get(n)?.spec?.providerID?.includes(rep?.instanceId ?? "\u0000") === true)
    if (name !== undefined && isReady(env, name)) {
      yield* nodeEvent(env, r, "Normal", "ReplacementReady", `replacement ${name} is Ready`)
      return fact({ _tag: "ReplacementReady" })
    }
    if (now >= timesOutAt) return fact({ _tag: "ReplacementTimedOut" })
    // A group still launching its new member is asked how far it got; a restarted controller asks again (the
    // launch is idempotent on the repair id, a group's growth on its recorded target).
    const unknown = rep?.instanceId === undefined && rep?.nodeName === undefined
    if (unknown || (!env.launched.has(r.id) && (name === undefined || env.cache.get(name) === undefined))) {
      const update = yield* askForReplacement(env, r)
      if (
        update.instanceId !== rep?.instanceId ||
        update.nodeName !== rep?.nodeName ||
        update.groupGrown !== rep?.groupGrown
      )
        return fact({ _tag: "ReplacementProgress", replacement: update })
    }
    return wait(Math.min(unknown ? 2000 : 5000, timesOutAt - now))
  }).pipe(Effect.catchTag("CloudError", unavailableIfCapacityFirst(r)))
