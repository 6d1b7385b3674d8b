/**
 * Where every finding goes, from periodic checks and log rules alike: config overrides first (a disabled
 * monitor or reason drops it, a severity override re-routes it), then `route` (a filesystem fault of a
 * Kubernetes volume becomes an Event, mounts/filesystem-routing.ts; after the overrides, so config cannot promote
 * a volume's fault back to a node condition), then Condition detections and resolutions to the ConditionWriter
 * and Event detections to the EventRecorder.
 */
import { Effect } from "effect"
import { applyOverrides, isMonitorEnabled } from "../config/overrides.ts"
import type { AgentConfig } from "../config/schema.ts"
import { findingsTotal, inc } from "../health/metrics.ts"
import type { Detection, Finding } from "../model.ts"
import type { ConditionWriter } from "./condition-writer.ts"
import type { EventRecorder } from "./event-recorder.ts"

export type DetectionRoute = (d: Detection) => Effect.Effect<Detection>

export const makeFindingSink =
  (
    config: AgentConfig,
    writer: ConditionWriter["Service"],
    recorder: EventRecorder["Service"],
    route: DetectionRoute = Effect.succeed
  ) =>
  (findings: readonly Finding[]): Effect.Effect<void> =>
    Effect.gen(function* () {
      const toWriter: Finding[] = []
      const toRecorder: Detection[] = []
      for (const f of findings) {
        if (f._tag === "Resolution") {
          if (isMonitorEnabled(config, f.monitor)) toWriter.push(f)
          continue
        }
        const overridden = applyOverrides(config, f)
        if (overridden === undefined) continue
        const d = yield* route(overridden)
        yield* inc(findingsTotal, { monitor: d.monitor, reason: d.reason, kind: d.severity })
        if (d.severity === "Condition") toWriter.push(d)
        else toRecorder.push(d)
      }
      yield* writer.submit(toWriter)
      for (const d of toRecorder) yield* recorder.record(d)
    })
