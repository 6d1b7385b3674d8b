/**
 * The replacement gate's DCGM diagnostic (ADR 0019): asks the replacement's agent through a NodeDiagnostic named
 * after the replacement and reads its answer, one step per poll of the gate (decide/dcgmDiagnosticGate.ts says
 * which). The request is owned by the replacement's Node, so it goes with the Node; it is kept as evidence
 * until then.
 */
import { type KubeHttp, nodePath } from "@nodemend/kube-access"
import {
  dcgmDiagnosticBody,
  decodeNodeDiagnostic,
  NODE_DIAGNOSTICS_PATH,
  nodeDiagnosticPath
} from "@nodemend/kube-access/NodeDiagnostic"
import { Clock, Effect, Schedule } from "effect"
import { type DiagnosticAsk, dcgmDiagnosticStep, REPAIR_ID_LABEL } from "../decide/dcgmDiagnosticGate.ts"
import type { ReplacementHealth } from "../decide/replacementHealth.ts"

const waiting = (why: string): ReplacementHealth => ({ _tag: "Waiting", why })
const failed = (why: string): ReplacementHealth => ({ _tag: "Unhealthy", check: "DcgmDiagnostic", why })
const healthy: ReplacementHealth = { _tag: "Healthy" }

const read = (http: KubeHttp, nodeName: string) =>
  http.call("read NodeDiagnostic", "GET", nodeDiagnosticPath(nodeName)).pipe(
    Effect.catchIf(
      (e) => e.code === 404,
      () => Effect.succeed(undefined)
    ),
    Effect.flatMap((raw) => (raw === undefined ? Effect.succeed(undefined) : decodeNodeDiagnostic(raw)))
  )

/** A fresh request (an object already there describes another request: it is replaced). */
const request = (http: KubeHttp, nodeName: string, repairId: string, ask: DiagnosticAsk) =>
  Effect.gen(function* () {
    const node = (yield* http.call("read node", "GET", nodePath(nodeName))) as
      | { readonly metadata?: { readonly uid?: string } }
      | undefined
    const body = dcgmDiagnosticBody(nodeName, ask.level, {
      labels: { "app.kubernetes.io/managed-by": "nodemend-repair-controller", [REPAIR_ID_LABEL]: repairId },
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name: nodeName, uid: node?.metadata?.uid ?? "" }]
    })
    const create = http.call("create NodeDiagnostic", "POST", NODE_DIAGNOSTICS_PATH, body)
    yield* create.pipe(
      Effect.catchIf(
        (e) => e.code === 409,
        () =>
          http
            .call("delete NodeDiagnostic", "DELETE", nodeDiagnosticPath(nodeName))
            .pipe(
              Effect.andThen(
                create.pipe(Effect.retry({ schedule: Schedule.spaced("200 millis"), times: 10 }))
              )
            )
      )
    )
  })

/**
 * The diagnostic's verdict on the replacement `nodeName`, which passed every other check. An API error is not a
 * verdict: the gate asks again within its bound.
 */
export const diagnosticHealth = (
  http: KubeHttp | undefined,
  repairId: string,
  nodeName: string,
  ask: DiagnosticAsk
): Effect.Effect<ReplacementHealth> =>
  Effect.gen(function* () {
    if (http === undefined) return failed("the controller has no API connection to ask it")
    const nd = yield* read(http, nodeName)
    const step = dcgmDiagnosticStep(nd, ask, repairId, yield* Clock.currentTimeMillis)
    switch (step._tag) {
      case "Request":
        yield* request(http, nodeName, repairId, ask)
        return waiting(`asked its agent for DCGM diagnostic level ${ask.level}`)
      case "Waiting":
        return waiting(step.why)
      case "Passed":
        return healthy
      case "Failed":
        return failed(step.why)
    }
  }).pipe(
    Effect.catch((e) =>
      Effect.succeed(waiting(`its DCGM diagnostic could not be asked or read: ${e.message}`))
    )
  )
