/**
 * Recovery of promoted reasons. A reason the catalog emits as an Event carries no "fault cleared" signal of
 * its own (an Event is one occurrence), so when config promotes it to a Condition
 * (`monitors.<m>.reasons.<R>.severity: Condition`) nothing would ever set the condition True again: it
 * latched until a repair. Here a promoted fault clears after a quiet period without a new occurrence of
 * the same reason and subject (`quietSeconds`, default 600); a resolve rule or a monitor's own Resolution
 * still clears it earlier. Each occurrence restarts the quiet period.
 */
import { resolveReason } from "@nodemend/reason-codes"
import { Clock, Duration, Effect, FiberMap, type Scope } from "effect"
import { isMonitorEnabled, reasonOverride } from "../config/overrides.ts"
import type { AgentConfig } from "../config/schema.ts"
import type { Detection, Finding, Resolution } from "../model.ts"

/** A promoted fault's quiet period when `quietSeconds` is not set: two 5-minute check periods. */
export const DEFAULT_PROMOTED_QUIET_SECONDS = 600

export type FindingSink = (findings: readonly Finding[]) => Effect.Effect<void>

/**
 * The quiet period of `d` when config promotes its Event-severity reason to a Condition; else undefined.
 * Only config promotes: a monitor that emits an Event reason as a Condition itself (a DCGM health FAIL,
 * catalog `alsoEmittedAs`) also reports when it clears, and must not be cleared by a timer.
 */
export const promotedQuietMs = (config: AgentConfig, d: Detection): number | undefined => {
  if (resolveReason(d.reason)?.entry.severity !== "Event") return undefined
  if (!isMonitorEnabled(config, d.monitor)) return undefined
  const o = reasonOverride(config, d.monitor, d.reason)
  if (o === undefined || o.disabled === true || o.severity !== "Condition") return undefined
  return (o.quietSeconds ?? DEFAULT_PROMOTED_QUIET_SECONDS) * 1000
}

const resolutionOf = (d: Detection, observedAtMs: number): Resolution => ({
  _tag: "Resolution",
  monitor: d.monitor,
  reason: d.reason,
  conditionType: d.conditionType,
  ...(d.subject !== undefined ? { subject: d.subject } : {}),
  observedAtMs
})

/**
 * Wraps the agent's finding sink: findings pass through unchanged, and every promoted detection (re)starts
 * a timer per (reason, subject) that sends its Resolution through the same sink when it runs out. The
 * timers live in the caller's scope.
 */
export const withPromotedRecovery = (
  config: AgentConfig,
  sink: FindingSink
): Effect.Effect<FindingSink, never, Scope.Scope> =>
  Effect.gen(function* () {
    const timers = yield* FiberMap.make<string>()
    return (findings) =>
      Effect.gen(function* () {
        yield* sink(findings)
        for (const f of findings) {
          if (f._tag !== "Detection") continue
          const quietMs = promotedQuietMs(config, f)
          if (quietMs === undefined) continue
          const clear = Effect.sleep(Duration.millis(quietMs)).pipe(
            Effect.andThen(Clock.currentTimeMillis),
            Effect.flatMap((now) => sink([resolutionOf(f, now)]))
          )
          yield* FiberMap.run(timers, `${f.reason}\u0000${f.subject ?? ""}`, clear)
        }
      })
  })
