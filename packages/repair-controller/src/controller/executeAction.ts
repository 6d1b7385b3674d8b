/**
 * Performs one state-machine action against the cluster and the cloud and reports what happened as a Fact,
 * or asks to be called again later. Every action observes before it mutates, so it is safe to repeat after
 * a crash: the taint is checked, the instance is described before terminate, launches are idempotent.
 */
import { Clock, Effect, Metric, Ref } from "effect"
import type { NodeRef } from "../cloud/CloudProvider.ts"
import { shiftedZones } from "../decide/zonalShiftGate.ts"
import type { Taint } from "../kube/types.ts"
import { nodeRef, podView } from "../kube/views.ts"
import * as M from "../observability/metrics.ts"
import { drainPlan, REPAIR_TAINT_EFFECT, REPAIR_TAINT_KEY } from "../repair/drainPlan.ts"
import type { RepairRecord } from "../repair/RepairRecord.ts"
import type { Action, Fact } from "../repair/stateMachine.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"

export type Outcome =
  | { readonly _tag: "Fact"; readonly fact: Fact }
  | { readonly _tag: "Wait"; readonly requeueAfterMs: number }

const fact = (f: Fact): Outcome => ({ _tag: "Fact", fact: f })
const wait = (ms: number): Outcome => ({ _tag: "Wait", requeueAfterMs: Math.max(0, ms) })

const POLL_MS = 1000
const INSTANCE_POLL_MS = 2000

/** The node as the repair recorded it (controller-written journal), never as the node describes itself now. */
const refOf = (r: RepairRecord): NodeRef =>
  nodeRef({ name: r.node.name, providerID: r.node.providerID, labels: r.node.labels })

const nodeEvent = (
  env: ControllerEnv,
  r: RepairRecord,
  type: "Normal" | "Warning",
  reason: string,
  note: string
) => env.events.emit({ node: { name: r.node.name, uid: r.node.uid }, type, reason, action: reason, note })

const isReady = (env: ControllerEnv, name: string) =>
  env.cache.get(name)?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false

/** Adds or removes the repair taint on the repair's own Node: the patch fails if the uid or version moved. */
const setTaint = (env: ControllerEnv, r: RepairRecord, present: boolean) =>
  Effect.gen(function* () {
    const name = r.node.name
    const node = yield* env.kube.readNode(name)
    const taints = node.spec?.taints ?? []
    const idx = taints.findIndex((t) => t.key === REPAIR_TAINT_KEY && t.effect === REPAIR_TAINT_EFFECT)
    if (present === idx >= 0) return "unchanged" as const
    const taint: Taint = { key: REPAIR_TAINT_KEY, value: "true", effect: REPAIR_TAINT_EFFECT }
    const ops: object[] = [
      { op: "test", path: "/metadata/uid", value: r.node.uid },
      { op: "test", path: "/metadata/resourceVersion", value: node.metadata?.resourceVersion }
    ]
    if (!present) ops.push({ op: "remove", path: `/spec/taints/${idx}` })
    else if (node.spec?.taints) ops.push({ op: "add", path: "/spec/taints/-", value: taint })
    else ops.push({ op: "add", path: "/spec/taints", value: [taint] })
    yield* env.kube.jsonPatchNode(name, ops)
    return "changed" as const
  })

const drain = (env: ControllerEnv, r: RepairRecord, deadlinePassed: boolean, force: boolean) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (deadlinePassed && !force && r.drainDeadlinePassed !== true) {
      yield* nodeEvent(
        env,
        r,
        "Warning",
        "DrainDeadlineExceeded",
        "drain deadline passed; drainMode=wait keeps evicting through PDBs"
      )
      return fact({ _tag: "DrainDeadlinePassed" })
    }
    const pods = (yield* env.kube.listPodsOnNode(r.node.name)).map(podView)
    const plan = drainPlan(pods, now)
    if (plan.remaining.length === 0) {
      env.backoff.delete(r.id)
      yield* nodeEvent(env, r, "Normal", "Drained", "all evictable pods are gone")
      return fact({ _tag: "Drained" })
    }
    if (force) {
      yield* Effect.forEach(
        plan.remaining,
        (p) =>
          env.kube.deletePod(p.namespace, p.name, p.uid, 0).pipe(
            Effect.tap(() =>
              Metric.update(Metric.withAttributes(M.evictions, { outcome: "force-deleted" }), 1)
            ),
            Effect.catchTag("KubeError", (e) =>
              e.code === 404 || e.code === 409 ? Effect.void : Effect.fail(e)
            )
          ),
        { concurrency: 10, discard: true }
      )
      if (r.drainDeadlinePassed !== true) {
        yield* nodeEvent(
          env,
          r,
          "Warning",
          "DrainForced",
          `drain deadline passed; force-deleted ${plan.remaining.length} pods`
        )
        return fact({ _tag: "DrainDeadlinePassed" })
      }
      return wait(POLL_MS)
    }
    const results = yield* Effect.forEach(
      plan.evict,
      (p) =>
        env.kube.evictPod(p.namespace, p.name, p.uid).pipe(
          Effect.as("evicted" as const),
          Effect.catchTag("KubeError", (e) =>
            e.code === 429
              ? Effect.succeed("pdb-blocked" as const)
              : e.code === 404 || e.code === 409
                ? Effect.succeed("gone" as const)
                : Effect.logWarning("eviction failed", {
                    pod: `${p.namespace}/${p.name}`,
                    error: e.message
                  }).pipe(Effect.as("error" as const))
          ),
          Effect.tap((outcome) => Metric.update(Metric.withAttributes(M.evictions, { outcome }), 1)),
          Effect.map((outcome) => ({ pod: p, outcome }))
        ),
      { concurrency: 10 }
    )
    const blocked = results.filter((x) => x.outcome === "pdb-blocked" || x.outcome === "error")
    if (blocked.length === 0) {
      env.backoff.delete(r.id)
      return wait(POLL_MS)
    }
    const attempt = env.backoff.get(r.id) ?? 0
    env.backoff.set(r.id, attempt + 1)
    const delay = Math.min(
      env.config.drain.evictionBackoffInitialMs * 2 ** attempt,
      env.config.drain.evictionBackoffMaxMs
    )
    yield* env.events.emitDeduped(`${r.id}/EvictionBlocked`, 60_000, {
      node: { name: r.node.name, uid: r.node.uid },
      type: "Warning",
      reason: "EvictionBlocked",
      action: "Drain",
      note: `eviction blocked by a PodDisruptionBudget for ${blocked
        .map((b) => `${b.pod.namespace}/${b.pod.name}`)
        .slice(0, 5)
        .join(", ")}; retrying with backoff`
    })
    return wait(delay)
  })

export const executeAction = (env: ControllerEnv, r: RepairRecord, action: Action) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    switch (action._tag) {
      case "Taint": {
        const changed = yield* env.taintFirst
          .tainting(setTaint(env, r, true))
          .pipe(
            Effect.catchTag("KubeError", (e) =>
              e.code === 404
                ? Effect.succeed("gone" as const)
                : e.code === 409 || e.code === 422
                  ? Effect.succeed("conflict" as const)
                  : Effect.fail(e)
            )
          )
        if (changed === "gone")
          return fact({ _tag: "Aborted", why: "node disappeared before it was tainted" })
        if (changed === "conflict") return wait(0)
        const expiredAt = env.expiredAt.get(r.id)
        if (expiredAt !== undefined) {
          env.expiredAt.delete(r.id)
          yield* Metric.update(M.decisionLatency, Math.max(0, now - expiredAt) / 1000)
        }
        yield* nodeEvent(
          env,
          r,
          "Normal",
          "Tainted",
          `tainted ${REPAIR_TAINT_KEY}:${REPAIR_TAINT_EFFECT}; draining next`
        )
        return fact({ _tag: "Tainted" })
      }
      case "Drain":
        return yield* drain(env, r, action.deadlinePassed, false)
      case "ForceDrain":
        return yield* drain(env, r, true, true)
      case "CaptureLogs": {
        const outcome = yield* env.logCapture
          .capture({
            nodeName: r.node.name,
            repairId: r.id,
            conditionType: r.conditionType,
            reason: r.reason,
            timeoutMs: action.timeoutMs
          })
          .pipe(
            Effect.timeoutOrElse({
              duration: action.timeoutMs,
              orElse: () => Effect.succeed("timed-out" as const)
            })
          )
        yield* nodeEvent(env, r, "Normal", "LogCapture", `pre-termination log capture: ${outcome}`)
        return fact({ _tag: "LogCaptureFinished", outcome })
      }
      case "Reboot": {
        yield* nodeEvent(
          env,
          r,
          "Warning",
          "Rebooting",
          `rebooting the instance for ${r.conditionType}=${r.conditionStatus} (${r.reason})`
        )
        yield* env.cloud.reboot(refOf(r))
        return fact({ _tag: "RebootRequested" })
      }
      case "AwaitReboot": {
        if (now >= action.timesOutAt) {
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
        if (now < action.settledAt || !isReady(env, r.node.name))
          return wait(Math.min(5000, Math.max(action.settledAt - now, POLL_MS)))
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
      }
      case "Terminate": {
        const state = yield* env.cloud.describe(refOf(r))
        if (state === "terminated" || state === "not-found") return fact({ _tag: "InstanceGone" })
        if (state === "shutting-down") return fact({ _tag: "TerminateRequested" })
        yield* env.events.emitNow({
          node: { name: r.node.name, uid: r.node.uid },
          type: "Warning",
          reason: "TerminatingInstance",
          action: "Terminate",
          note: `terminating ${r.node.providerID || r.node.name} through ${env.cloud.name}`
        })
        yield* Metric.update(Metric.withAttributes(M.terminations, { provider: env.cloud.name }), 1)
        const after = yield* env.cloud.terminate(refOf(r))
        return fact(
          after === "terminated" || after === "not-found"
            ? { _tag: "InstanceGone" }
            : { _tag: "TerminateRequested" }
        )
      }
      case "AwaitInstanceGone": {
        const state = yield* env.cloud.describe(refOf(r))
        if (state === "terminated" || state === "not-found") {
          yield* nodeEvent(env, r, "Normal", "InstanceTerminated", "the instance is gone")
          return fact({ _tag: "InstanceGone" })
        }
        return wait(INSTANCE_POLL_MS)
      }
      case "DeleteNode": {
        yield* env.kube
          .deleteNode(r.node.name, r.node.uid)
          .pipe(
            Effect.catchTag("KubeError", (e) =>
              e.code === 404 || e.code === 409 ? Effect.void : Effect.fail(e)
            )
          )
        return fact({ _tag: "NodeRemoved" })
      }
      case "LaunchReplacement": {
        const avoidZones = shiftedZones(yield* Ref.get(env.shifts), now)
        const replacement = yield* env.cloud.launchReplacement(refOf(r), {
          facts: r.node.instance,
          avoidZones,
          idempotencyToken: r.id
        })
        env.launched.add(r.id)
        yield* nodeEvent(
          env,
          r,
          "Normal",
          "LaunchingReplacement",
          `replacement ${replacement.nodeName ?? replacement.instanceId} requested`
        )
        return fact({ _tag: "ReplacementLaunched", replacement })
      }
      case "AwaitReplacement": {
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
        if (now >= action.timesOutAt) return fact({ _tag: "ReplacementTimedOut" })
        if (!env.launched.has(r.id) && (name === undefined || env.cache.get(name) === undefined)) {
          // A restarted controller asks again; the launch is idempotent on the repair id.
          const avoidZones = shiftedZones(yield* Ref.get(env.shifts), now)
          yield* env.cloud.launchReplacement(refOf(r), {
            facts: r.node.instance,
            avoidZones,
            idempotencyToken: r.id
          })
          env.launched.add(r.id)
        }
        return wait(Math.min(5000, action.timesOutAt - now))
      }
      case "Untaint": {
        yield* setTaint(env, r, false).pipe(
          Effect.catchTag("KubeError", (e) =>
            e.code === 404 ? Effect.succeed("gone" as const) : Effect.fail(e)
          )
        )
        return fact({ _tag: "Untainted" })
      }
      case "Done":
        return wait(0)
    }
  })
