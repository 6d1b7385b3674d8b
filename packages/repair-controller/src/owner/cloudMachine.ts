/**
 * The steps of a machine the cloud provider removes and replaces (an Auto Scaling group member, a standalone EC2
 * instance, a kwok Node): describe before terminate, the launch idempotent on the repair id. The adapters
 * (autoScalingOwner, launchTemplateOwner, kwokOwner) say whom they act through, which launch they ask, and how
 * they name what they asked for.
 */
import { Clock, Effect, Metric } from "effect"
import type { CloudError, InvalidProviderID, LaunchOptions, NodeRef } from "../cloud/CloudProvider.ts"
import type { Replacement } from "../domain/Instance.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { isReady, nodeEvent, refOf } from "../kube/stepPorts.ts"
import * as M from "../observability/metrics.ts"
import { fact, wait } from "../repair/outcome.ts"
import { type Fact, replacementToken } from "../repair/stateMachine.ts"
import type { MachineOwner, OwnerPorts } from "./MachineOwner.ts"

const INSTANCE_POLL_MS = 2000

/** What differs between the cloud-removed owners. */
export interface CloudMachine {
  readonly name: (r: RepairRecord) => string
  /** Asks for the replacement of `r` (idempotent on the repair id; with `previous`, reports progress). */
  readonly launch: (
    node: NodeRef,
    options: LaunchOptions,
    r: RepairRecord
  ) => Effect.Effect<Replacement, CloudError | InvalidProviderID>
  /** How the Event names the replacement just asked for. */
  readonly requested: (replacement: Replacement) => string
  /**
   * What the owner must have in the record before the old machine is terminated (journaled first, then
   * `removeMachine` is asked again), if anything.
   */
  readonly beforeRemoval?: (
    r: RepairRecord
  ) => Effect.Effect<Fact | undefined, CloudError | InvalidProviderID>
}

type Env = OwnerPorts & {
  /** Repairs whose replacement this process has asked for (asked again once after a restart). */
  readonly launched: Set<string>
}

/** Capacity first (or a group already grown for it): the replacement is up, so a group shrinks back. */
export const replacedFirst = (r: RepairRecord): boolean =>
  r.order === "capacityFirst" || r.replacement?.desiredCapacity !== undefined

const terminate = (env: Env, machine: CloudMachine, r: RepairRecord) =>
  Effect.gen(function* () {
    const state = yield* env.cloud.describe(refOf(r))
    if (state === "terminated" || state === "not-found") return fact({ _tag: "InstanceGone" })
    if (state === "shutting-down") return fact({ _tag: "TerminateRequested" })
    const first = machine.beforeRemoval === undefined ? undefined : yield* machine.beforeRemoval(r)
    if (first !== undefined) return fact(first)
    yield* env.events.emitNow({
      node: { name: r.node.name, uid: r.node.uid },
      type: "Warning",
      reason: "TerminatingInstance",
      action: "Terminate",
      note: `terminating ${r.node.instance.instanceId} through ${env.cloud.name}`
    })
    yield* Metric.update(Metric.withAttributes(M.terminations, { provider: env.cloud.name }), 1)
    const after = yield* env.cloud.terminate(refOf(r), { replaced: replacedFirst(r) })
    return fact(
      after === "terminated" || after === "not-found"
        ? { _tag: "InstanceGone" }
        : { _tag: "TerminateRequested" }
    )
  })

const awaitInstanceGone = (env: Env, r: RepairRecord) =>
  Effect.gen(function* () {
    const state = yield* env.cloud.describe(refOf(r))
    if (state !== "terminated" && state !== "not-found") return wait(INSTANCE_POLL_MS)
    yield* nodeEvent(env.events, r, "Normal", "InstanceTerminated", "the instance is gone")
    return fact({ _tag: "InstanceGone" })
  })

const deleteNode = (env: Env, r: RepairRecord) =>
  env.kube.deleteNode(r.node.name, r.node.uid).pipe(
    Effect.catchTag("KubeError", (e) => (e.code === 404 || e.code === 409 ? Effect.void : Effect.fail(e))),
    Effect.as(fact({ _tag: "NodeRemoved" }))
  )

const askForReplacement = (env: Env, machine: CloudMachine, r: RepairRecord) =>
  Effect.gen(function* () {
    const avoidZones = yield* env.avoidZones
    const requestedAtMs =
      r.replacementRequestedAt === undefined ? undefined : Date.parse(r.replacementRequestedAt)
    const replacement = yield* machine.launch(
      refOf(r),
      {
        facts: r.node.instance,
        avoidZones,
        idempotencyToken: replacementToken(r),
        capacityFirst: r.order === "capacityFirst",
        ...(r.replacement !== undefined ? { previous: r.replacement } : {}),
        ...(requestedAtMs !== undefined ? { requestedAtMs } : {})
      },
      r
    )
    env.launched.add(r.id)
    return replacement
  })

/** Capacity first, a replacement the owner refuses (capacity, limits) is the policy's fallback, not a failure. */
const unavailableIfCapacityFirst = (r: RepairRecord) => (e: CloudError) =>
  r.order === "capacityFirst" && !e.retryable
    ? Effect.succeed(fact({ _tag: "ReplacementUnavailable", why: `${e.operation}: ${e.message}` }))
    : Effect.fail(e)

const launchReplacement = (env: Env, machine: CloudMachine, r: RepairRecord) =>
  Effect.gen(function* () {
    const replacement = yield* askForReplacement(env, machine, r)
    yield* nodeEvent(env.events, r, "Normal", "LaunchingReplacement", machine.requested(replacement))
    return fact({ _tag: "ReplacementLaunched", replacement })
  }).pipe(Effect.catchTag("CloudError", unavailableIfCapacityFirst(r)))

const awaitReplacement = (env: Env, machine: CloudMachine, r: RepairRecord, timesOutAt: number) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const rep = r.replacement
    const name =
      rep?.nodeName ??
      env.cache
        .names()
        .find((n) => env.cache.get(n)?.spec?.providerID?.includes(rep?.instanceId ?? "\u0000") === true)
    // Up; whether it is capacity is the health gate's to say (actions/replacementGate.ts).
    if (name !== undefined && isReady(env.cache, name))
      return fact({ _tag: "ReplacementReady", nodeName: name, note: `replacement ${name} is Ready` })
    if (now >= timesOutAt) return fact({ _tag: "ReplacementTimedOut" })
    // A group still launching its new member is asked how far it got; a restarted controller asks again (the
    // launch is idempotent on the repair id, a group's growth on its recorded target).
    const unknown = rep?.instanceId === undefined && rep?.nodeName === undefined
    if (unknown || (!env.launched.has(r.id) && (name === undefined || env.cache.get(name) === undefined))) {
      const update = yield* askForReplacement(env, machine, r)
      if (
        update.instanceId !== rep?.instanceId ||
        update.nodeName !== rep?.nodeName ||
        update.groupGrown !== rep?.groupGrown
      )
        return fact({ _tag: "ReplacementProgress", replacement: update })
    }
    return wait(Math.min(unknown ? 2000 : 5000, timesOutAt - now))
  }).pipe(Effect.catchTag("CloudError", unavailableIfCapacityFirst(r)))

/** An adapter of the owner port for a machine the cloud provider removes and replaces. */
export const cloudMachineOwner = (ports: OwnerPorts, machine: CloudMachine): MachineOwner => {
  const env: Env = { ...ports, launched: new Set() }
  return {
    name: machine.name,
    addCapacity: (r) => launchReplacement(env, machine, r),
    awaitCapacity: (r, timesOutAt) => awaitReplacement(env, machine, r, timesOutAt),
    removeMachine: (r) => terminate(env, machine, r),
    awaitMachineGone: (r) => awaitInstanceGone(env, r),
    removeNode: (r) => deleteNode(env, r),
    release: (r) => Effect.sync(() => env.launched.delete(r.id))
  }
}
