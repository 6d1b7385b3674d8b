/**
 * The reconcile's side of RepairRequests (decide/repairRequest.ts, ADR 0020): a node's open requests, those refused
 * for good (Refused, and a RepairRefused Event on the node), the governing one as decide's `requested` match, and
 * the request's status after the decision: Held with what lifts it, Started with the repair, Done when it ends.
 */
import { isSettled, type RepairRequest, type RepairRequestStatus } from "@nodemend/kube-access/RepairRequest"
import { Clock, Effect } from "effect"
import type { Decision } from "../decide/decide.ts"
import type { PolicyMatch } from "../decide/policyMatch.ts"
import {
  governingRequest,
  type RequestView,
  requestRef,
  requestRefusal,
  requestedMatch
} from "../decide/repairRequest.ts"
import { requestStatusOf } from "../decide/requestStatus.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { EVENT_DEDUPE_MS } from "../kube/EventRecorder.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"

/** The ports the repair requests use. */
export type RequestPorts = Pick<ControllerEnv, "config" | "events" | "requests" | "store">

export interface RequestIntake {
  /** The node's requests still open after the refusals, oldest first. */
  readonly open: ReadonlyArray<RepairRequest>
  /** The governing one's match for decide, when any is open. */
  readonly match: PolicyMatch | undefined
  readonly governing: RequestView | undefined
}

const NONE: RequestIntake = { open: [], match: undefined, governing: undefined }

export const viewOf = (r: RepairRequest): RequestView => ({
  namespace: r.metadata.namespace,
  name: r.metadata.name,
  uid: r.metadata.uid,
  createdAt: Date.parse(r.metadata.creationTimestamp),
  nodeName: r.spec.nodeName,
  reason: r.spec.reason,
  message: r.spec.message ?? "",
  requestedBy: r.spec.requestedBy.username
})

/** A status write that fails is logged: the next reconcile of the node writes it again. */
const write = (env: RequestPorts, r: RepairRequest, status: RepairRequestStatus) =>
  env.requests.setStatus(r, status).pipe(
    Effect.catch((e) =>
      Effect.logWarning("could not write a RepairRequest's status", {
        request: `${r.metadata.namespace}/${r.metadata.name}`,
        error: e.message
      })
    )
  )

const refuse = (
  env: RequestPorts,
  r: RepairRequest,
  node: NodeView | undefined,
  why: string,
  reason: string
) =>
  Effect.gen(function* () {
    yield* write(env, r, { phase: "Refused", reason, message: why.slice(0, 1000) })
    if (node === undefined) return
    yield* env.events.emitDeduped(`${node.name}/RequestRefused/${r.metadata.uid}`, EVENT_DEDUPE_MS, {
      node: { name: node.name, uid: node.uid },
      type: "Warning",
      reason: "RepairRefused",
      action: "Decide",
      note: `not repairing as RepairRequest ${requestRef(viewOf(r))} by ${r.spec.requestedBy.username} asks: ${why}`.slice(
        0,
        1000
      )
    })
  })

/** The node's open requests, the refused ones settled; the governing one as a match. */
export const intakeRequests = (env: RequestPorts, name: string, node: NodeView | undefined) =>
  Effect.gen(function* () {
    const open = env.requests.of(name).filter((r) => !isSettled(r.status?.phase))
    if (open.length === 0) return NONE
    if (node === undefined || node.deleting) {
      for (const r of open)
        yield* refuse(
          env,
          r,
          undefined,
          `there is no Node ${name} among the Nodes this controller watches`,
          "NoNode"
        )
      return NONE
    }
    const kept: RepairRequest[] = []
    for (const r of open) {
      const why = requestRefusal(env.config, viewOf(r), env.requests.proof())
      if (why === undefined) kept.push(r)
      else yield* refuse(env, r, node, why, "Unproven")
    }
    const governing = governingRequest(kept.map(viewOf))
    return {
      open: kept,
      match: governing === undefined ? undefined : requestedMatch(env.config, governing),
      governing
    }
  })

/** The open requests' status for a decision that starts no repair. */
export const reportRequests = (
  env: RequestPorts,
  intake: RequestIntake,
  d: Exclude<Decision, { _tag: "Repair" }>
) => Effect.forEach(intake.open, (r) => write(env, r, requestStatusOf(d)), { discard: true })

/**
 * The decision starts a repair: Accepted until its record is journaled (then Started), so an earlier Held never
 * outlives the gate that held it (the start may still wait for the owner's proof, or be refused: its Event says).
 */
export const requestsDue = (env: RequestPorts, intake: RequestIntake) =>
  Effect.forEach(
    intake.open,
    (r) =>
      write(env, r, {
        phase: "Accepted",
        reason: "Due",
        message: "due: the gates let it through; starting the repair"
      }),
    { discard: true }
  )

/**
 * A request whose node has a repair record: Started with it (the request's own repair, or one it follows: every
 * open request of a node under repair is answered by that repair), Held while a failed repair waits for an operator.
 */
const follow = (env: RequestPorts, r: RepairRequest, record: RepairRecord) => {
  if (record.phase === "Failed")
    return write(env, r, {
      phase: "Held",
      reason: "RepairFailed",
      message: `the node's repair ${record.id} failed and is kept for an operator; lifts with kubectl nodemend retry ${r.spec.nodeName} (or abandon)`
    })
  const own = record.requestedBy?.request === requestRef(viewOf(r))
  return write(env, r, {
    phase: "Started",
    reason: own ? "Requested" : "UnderRepair",
    repairId: record.id,
    message: own
      ? `repair ${record.id} started: ${record.action} for ${record.reason}, requested by ${record.requestedBy?.username}`
      : `the node is under repair ${record.id} (${record.conditionType}=${record.conditionStatus}, ${record.reason}): this request follows it`
  })
}

/** The node's open requests after a repair started on it (or one was found in flight). */
export const requestsFollow = (env: RequestPorts, nodeName: string) =>
  Effect.suspend(() => {
    const stored = env.store.get(nodeName)
    if (stored._tag !== "Record") return Effect.void
    const open = env.requests.of(nodeName).filter((r) => !isSettled(r.status?.phase))
    return Effect.forEach(open, (r) => follow(env, r, stored.record), { discard: true })
  })

/** The repair ended: the requests it answered are Done with its outcome. */
export const requestsEnded = (env: RequestPorts, record: RepairRecord, outcome: "Succeeded" | "Failed") =>
  Effect.forEach(
    env.requests
      .of(record.node.name)
      .filter((r) => r.status?.phase === "Started" && r.status.repairId === record.id),
    (r) =>
      write(env, r, {
        phase: "Done",
        reason: outcome,
        outcome,
        repairId: record.id,
        message:
          `repair ${record.id} ${outcome === "Succeeded" ? "succeeded" : `failed: ${record.failure ?? "see its RepairFailed Event"}`}`.slice(
            0,
            1000
          )
      }),
    { discard: true }
  )

/**
 * Requests whose repair ended while no one wrote it (a controller restart between the end and the write): Done
 * once their repair's record is gone. Also a request for a node already under repair follows that repair.
 */
const sweep = (env: RequestPorts) =>
  Effect.forEach(
    env.requests.all(),
    (r) => {
      const stored = env.store.get(r.spec.nodeName)
      const record = stored._tag === "Record" ? stored.record : undefined
      if (r.status?.phase === "Started" && record?.id !== r.status.repairId)
        return write(env, r, {
          phase: "Done",
          reason: "Ended",
          outcome: "Ended",
          ...(r.status.repairId !== undefined ? { repairId: r.status.repairId } : {}),
          message: `repair ${r.status.repairId ?? ""} ended; its record is closed`
        })
      return !isSettled(r.status?.phase) && record !== undefined ? follow(env, r, record) : Effect.void
    },
    { discard: true }
  )

/** How often the policy proof is read and the requests swept. */
export const SWEEP_MS = 5_000

/** The loop the controller forks: the proof every PROOF_REFRESH_MS, the sweep every SWEEP_MS while requests exist. */
export const requestLoop = (env: RequestPorts, proofEveryMs: number) =>
  Effect.gen(function* () {
    let last = 0
    for (;;) {
      const now = yield* Clock.currentTimeMillis
      if (now - last >= proofEveryMs) {
        yield* env.requests.refreshProof
        last = now
      }
      yield* sweep(env)
      // With no request to sweep, the next round is the proof's (a request's first status is its reconcile's).
      yield* Effect.sleep(
        env.requests.all().length > 0 ? SWEEP_MS : Math.max(SWEEP_MS, last + proofEveryMs - now)
      )
    }
  })
