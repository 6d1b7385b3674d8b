/** Pre-termination log capture: bounded by its timeout, and never a reason to keep a broken node. */
import { Effect } from "effect"
import type { ControllerEnv } from "../controller/ControllerEnv.ts"
import type { RepairRecord } from "../repair/RepairRecord.ts"
import { fact, nodeEvent } from "./step.ts"

export const captureLogs = (env: ControllerEnv, r: RepairRecord, timeoutMs: number) =>
  Effect.gen(function* () {
    const outcome = yield* env.logCapture
      .capture({
        nodeName: r.node.name,
        repairId: r.id,
        conditionType: r.conditionType,
        reason: r.reason,
        timeoutMs
      })
      .pipe(Effect.timeoutOrElse({ duration: timeoutMs, orElse: () => Effect.succeed("timed-out" as const) }))
    yield* nodeEvent(env, r, "Normal", "LogCapture", `pre-termination log capture: ${outcome}`)
    return fact({ _tag: "LogCaptureFinished", outcome })
  })
