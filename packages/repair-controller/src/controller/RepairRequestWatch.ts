/**
 * The RepairRequests of the controller's namespace on the shared list+watch loop (ADR 0020), indexed by node; a
 * request that comes, changes or goes wakes its node. The proof that the admission policy checks `requestedBy` is
 * read at start and every `PROOF_REFRESH_MS`; a request's status is written only when it changes (the write's own
 * watch event then finds it unchanged). A request that does not decode is logged and skipped, never guessed at.
 */
import { Clock, Duration, Effect, Fiber, Result } from "effect"
import { type KubeError, type KubeHttp, listWatch } from "@nodemend/kube-access"
import {
  decodeRepairRequest,
  isSettled,
  REPAIR_REQUEST_POLICY,
  type RepairRequest,
  type RepairRequestStatus,
  repairRequestPath,
  repairRequestsPath
} from "@nodemend/kube-access/RepairRequest"
import type { PolicyProof } from "../decide/repairRequest.ts"
import { policyProofOf } from "./requestPolicy.ts"

export interface RepairRequestWatch {
  /** Every request naming the node, settled or not. */
  readonly of: (nodeName: string) => ReadonlyArray<RepairRequest>
  readonly all: () => ReadonlyArray<RepairRequest>
  readonly proof: () => PolicyProof
  /** Reads the policy and its binding again. */
  readonly refreshProof: Effect.Effect<void>
  /** Writes the status when it differs from the one last seen (phase, reason, message, repair, outcome). */
  readonly setStatus: (r: RepairRequest, status: RepairRequestStatus) => Effect.Effect<void, KubeError>
  readonly start: () => void
  readonly stop: () => Promise<void>
}

/** How often the admission policy's presence is read again (a deleted policy refuses requests from then on). */
export const PROOF_REFRESH_MS = 30_000

const ADMISSION = "/apis/admissionregistration.k8s.io/v1"

type Log = (level: "info" | "warn", msg: string, extra?: Record<string, unknown>) => void

/** Whether the status already says all `next` says (a merge patch keeps the fields `next` leaves out). */
const sameStatus = (seen: RepairRequestStatus | undefined, next: RepairRequestStatus) =>
  (Object.keys(next) as Array<keyof RepairRequestStatus>).every((k) => seen?.[k] === next[k])

export const makeRepairRequestWatch = (
  http: KubeHttp,
  namespace: string,
  wake: (nodeName: string) => void,
  log: Log
): RepairRequestWatch => {
  const items = new Map<string, RepairRequest>()
  let listed = new Set<string>()
  let proof: PolicyProof = { _tag: "Absent", why: "the admission policy has not been read yet" }
  let loop: Fiber.Fiber<never> | undefined
  const put = (name: string, after: RepairRequest | undefined) => {
    const before = items.get(name)
    if (after === undefined) items.delete(name)
    else items.set(name, after)
    for (const node of new Set([before?.spec.nodeName, after?.spec.nodeName]))
      if (node !== undefined) wake(node)
  }
  const read = (path: string) =>
    http.call("readAdmissionPolicy", "GET", path).pipe(
      Effect.catchIf(
        (e: KubeError) => e.code === 404,
        () => Effect.succeed(undefined)
      )
    )
  const refreshProof = Effect.all([
    read(`${ADMISSION}/validatingadmissionpolicies/${REPAIR_REQUEST_POLICY}`),
    read(`${ADMISSION}/validatingadmissionpolicybindings/${REPAIR_REQUEST_POLICY}`)
  ]).pipe(
    Effect.map(([p, b]) => policyProofOf(p, b)),
    Effect.catch((e: KubeError) =>
      Effect.succeed<PolicyProof>({
        _tag: "Absent",
        why: `the admission policy cannot be read (${e.message})`
      })
    ),
    Effect.flatMap((next) =>
      Effect.sync(() => {
        const changed = next._tag !== proof._tag
        proof = next
        if (changed) for (const r of items.values()) if (!isSettled(r.status?.phase)) wake(r.spec.nodeName)
      })
    )
  )
  return {
    of: (nodeName) => [...items.values()].filter((r) => r.spec.nodeName === nodeName),
    all: () => [...items.values()],
    proof: () => proof,
    refreshProof,
    setStatus: (r, status) =>
      Effect.gen(function* () {
        const seen = items.get(r.metadata.name) ?? r
        if (sameStatus(seen.status, status)) return
        const now = yield* Clock.currentTimeMillis
        const body = { status: { ...status, lastTransitionTime: new Date(now).toISOString() } }
        yield* http
          .call(
            "patchRepairRequestStatus",
            "PATCH",
            `${repairRequestPath(namespace, r.metadata.name)}/status`,
            body,
            "application/merge-patch+json"
          )
          .pipe(
            Effect.tap((answer) =>
              Effect.sync(() => {
                const d = decodeRepairRequest(answer)
                // Seen now, so the watch event of this very write does not write it again.
                if (Result.isSuccess(d) && items.has(r.metadata.name)) items.set(r.metadata.name, d.success)
              })
            ),
            Effect.asVoid
          )
      }),
    start: () => {
      loop = Effect.runFork(
        listWatch({
          http,
          path: repairRequestsPath(namespace),
          query: {},
          onListStart: () => {
            listed = new Set()
          },
          onObject: (type, object) => {
            const r = decodeRepairRequest(object)
            if (Result.isFailure(r))
              return log("warn", "skipping an unreadable RepairRequest", { error: String(r.failure) })
            const name = r.success.metadata.name
            if (type === "LISTED") listed.add(name)
            put(name, type === "DELETED" ? undefined : r.success)
          },
          onSynced: () => {
            for (const name of [...items.keys()]) if (!listed.has(name)) put(name, undefined)
          },
          // No CRD yet (404) or no RBAC (403): asked again within a minute, logged each time.
          onFailure: (_end, pause, detail) =>
            Effect.sync(() =>
              log("warn", `RepairRequest watch failed; again in ${Duration.toSeconds(pause)}s`, {
                error: detail
              })
            )
        })
      )
    },
    stop: async () => {
      if (loop !== undefined) await Effect.runPromise(Fiber.interrupt(loop))
    }
  }
}
