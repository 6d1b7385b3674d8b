/**
 * The Karpenter adapter of the owner port: a Karpenter-owned node's steps go through Karpenter's objects, never
 * the cloud: the replacement is a NodeClaim nodemend creates (Karpenter launches it with its own provider and
 * template), removal is deleting the broken NodeClaim (Karpenter's `karpenter.sh/termination` finalizer
 * terminates the instance and deletes the Node; nodemend never touches that finalizer).
 */
import { Clock, Effect } from "effect"
import { REPLACEMENT_OF_LABEL } from "@nodemend/reason-codes"
import type { KubeError } from "@nodemend/kube-access"
import {
  DO_NOT_DISRUPT_ANNOTATION,
  isInitialized,
  NODECLAIMS_PATH,
  replacementName,
  replacementNodeClaim,
  UNREGISTERED_TAINT
} from "../karpenter/NodeClaims.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { isReady, nodeEvent } from "../kube/stepPorts.ts"
import { fact, wait } from "../repair/outcome.ts"
import { replacementToken } from "../repair/stateMachine.ts"
import type { MachineOwner, OwnerPorts } from "./MachineOwner.ts"

const POLL_MS = 1000
/** A replacement NodeClaim missing this long after we created it was removed by Karpenter (it could not launch). */
const VANISHED_AFTER_MS = 15_000

const claimOf = (r: RepairRecord) =>
  r.node.instance.owner.kind === "karpenter" ? r.node.instance.owner.nodeClaim : ""

const ignoring =
  (...codes: ReadonlyArray<number>) =>
  (e: KubeError) =>
    e.code !== undefined && codes.includes(e.code) ? Effect.void : Effect.fail(e)

/** Creates the replacement NodeClaim (a repeat finds it: 409), copied from the broken node's claim. */
const launchReplacement = (env: OwnerPorts, r: RepairRecord) =>
  Effect.gen(function* () {
    if (r.order === "removeFirst") {
      // Removed first, Karpenter provisions for the evicted pods itself; a NodeClaim of ours would be a second one.
      yield* nodeEvent(
        env.events,
        r,
        "Normal",
        "ReplacementByKarpenter",
        "Karpenter provisions for the evicted pods"
      )
      return fact({ _tag: "ReplacementReady" })
    }
    const old = env.karpenter.claim(claimOf(r))
    if (old === undefined)
      return fact({ _tag: "ReplacementUnavailable", why: `NodeClaim ${claimOf(r)} is gone; nothing to copy` })
    const avoidZones = yield* env.avoidZones
    const name = replacementName(claimOf(r), replacementToken(r))
    const pool = r.node.instance.owner.kind === "karpenter" ? r.node.instance.owner.nodePool : undefined
    const body = replacementNodeClaim(old, pool === undefined ? undefined : env.karpenter.nodePool(pool), {
      name,
      replacesNode: r.node.name,
      replacementOfLabel: REPLACEMENT_OF_LABEL,
      avoidZones
    })
    yield* env.kube.http
      .call("createNodeClaim", "POST", NODECLAIMS_PATH, body)
      .pipe(Effect.catchTag("KubeError", ignoring(409)))
    yield* nodeEvent(
      env.events,
      r,
      "Normal",
      "LaunchingReplacement",
      `NodeClaim ${name} created for Karpenter to launch`
    )
    return fact({ _tag: "ReplacementLaunched", replacement: { nodeClaim: name } })
  })

/** Ready = the NodeClaim is Initialized and its Node is Ready without Karpenter's unregistered taint. */
const awaitReplacement = (env: OwnerPorts, r: RepairRecord, timesOutAt: number) =>
  Effect.gen(function* () {
    if (r.order === "removeFirst") return yield* launchReplacement(env, r)
    const now = yield* Clock.currentTimeMillis
    const name = r.replacement?.nodeClaim ?? ""
    const claim = env.karpenter.claim(name)
    const requested = Date.parse(r.replacementRequestedAt ?? "") || now
    if (claim === undefined && now - requested > VANISHED_AFTER_MS)
      return fact({
        _tag: "ReplacementUnavailable",
        why: `Karpenter removed NodeClaim ${name} before it was Ready (no capacity, limits or a launch failure)`
      })
    const nodeName = claim?.status?.nodeName
    if (nodeName !== undefined && r.replacement?.nodeName === undefined)
      return fact({ _tag: "ReplacementProgress", replacement: { ...r.replacement, nodeName } })
    const node = nodeName === undefined ? undefined : env.cache.get(nodeName)
    const registered =
      node !== undefined && !(node.spec?.taints ?? []).some((t) => t.key === UNREGISTERED_TAINT)
    if (
      claim !== undefined &&
      isInitialized(claim) &&
      nodeName !== undefined &&
      registered &&
      isReady(env.cache, nodeName)
    )
      // Up; whether it is capacity is the health gate's to say (actions/replacementGate.ts).
      return fact({
        _tag: "ReplacementReady",
        nodeName,
        note: `replacement ${nodeName} (NodeClaim ${name}) is Ready`
      })
    if (now >= timesOutAt) return fact({ _tag: "ReplacementTimedOut" })
    return wait(Math.min(POLL_MS, timesOutAt - now))
  })

/** Deletes the broken node's NodeClaim: Karpenter's finalizer drains what is left and terminates the instance. */
const terminate = (env: OwnerPorts, r: RepairRecord) =>
  Effect.gen(function* () {
    const name = claimOf(r)
    if (env.karpenter.claim(name) === undefined) return fact({ _tag: "InstanceGone" })
    yield* env.events.emitNow({
      node: { name: r.node.name, uid: r.node.uid },
      type: "Warning",
      reason: "TerminatingInstance",
      action: "Terminate",
      note: `deleting NodeClaim ${name}; Karpenter terminates the instance`
    })
    yield* env.kube.http
      .call("deleteNodeClaim", "DELETE", `${NODECLAIMS_PATH}/${encodeURIComponent(name)}`)
      .pipe(Effect.catchTag("KubeError", ignoring(404)))
    return fact({ _tag: "TerminateRequested" })
  })

const awaitInstanceGone = (env: OwnerPorts, r: RepairRecord) =>
  Effect.gen(function* () {
    if (env.karpenter.claim(claimOf(r)) !== undefined) return wait(POLL_MS)
    yield* nodeEvent(env.events, r, "Normal", "InstanceTerminated", `NodeClaim ${claimOf(r)} is gone`)
    return fact({ _tag: "InstanceGone" })
  })

/**
 * The replacement NodeClaim (and its Node) made do-not-disrupt for the repair is Karpenter's to consolidate again:
 * called on every ending, success or failure, so a failed repair never leaves capacity Karpenter may not touch.
 */
const releaseReplacement = (env: OwnerPorts, r: RepairRecord) =>
  Effect.gen(function* () {
    const name = r.replacement?.nodeClaim
    if (name === undefined) return
    const drop = { metadata: { annotations: { [DO_NOT_DISRUPT_ANNOTATION]: null } } }
    const patch = (operation: string, path: string) =>
      env.kube.http
        .call(operation, "PATCH", path, drop, "application/merge-patch+json")
        .pipe(Effect.catchTag("KubeError", ignoring(404)))
    yield* patch("patchNodeClaim", `${NODECLAIMS_PATH}/${encodeURIComponent(name)}`)
    const node = r.replacement?.nodeName
    if (node !== undefined) yield* patch("patchNode", `/api/v1/nodes/${encodeURIComponent(node)}`)
  })

/** Karpenter deletes the Node; we wait for it, then let consolidation treat the replacement like any node. */
const awaitNodeRemoved = (env: OwnerPorts, r: RepairRecord) =>
  Effect.gen(function* () {
    if (env.cache.get(r.node.name)?.metadata?.uid === r.node.uid) return wait(POLL_MS)
    yield* releaseReplacement(env, r)
    return fact({ _tag: "NodeRemoved" })
  })

/** The Karpenter adapter of the owner port. */
export const karpenterOwner = (ports: OwnerPorts): MachineOwner => ({
  name: (r) => `Karpenter NodeClaim ${claimOf(r)}`,
  addCapacity: (r) => launchReplacement(ports, r),
  awaitCapacity: (r, timesOutAt) => awaitReplacement(ports, r, timesOutAt),
  removeMachine: (r) => terminate(ports, r),
  awaitMachineGone: (r) => awaitInstanceGone(ports, r),
  removeNode: (r) => awaitNodeRemoved(ports, r),
  // A succeeded repair released its replacement when the old Node went (awaitNodeRemoved).
  release: (r) => (r.phase === "Succeeded" ? Effect.void : releaseReplacement(ports, r))
})
