/**
 * DeprecatedContainerdConfiguration (reference 2.4): `ctr deprecations list --format json` on the host;
 * every deprecation whose last occurrence is within the last hour is a Warning Event.
 */
import { Effect, Schema } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { type CommandRunner, exitDetail } from "./command-runner.ts"
import { detection } from "./finding.ts"

const Deprecation = Schema.Struct({
  id: Schema.String,
  message: Schema.optional(Schema.String),
  lastOccurrence: Schema.optional(Schema.String)
})
const Deprecations = Schema.NullOr(Schema.Array(Deprecation))
const WINDOW_MS = 60 * 60_000

export const recentDeprecations = (stdout: string, nowMs: number): { id: string; message: string }[] => {
  let parsed: unknown
  try {
    parsed = JSON.parse(stdout.trim() === "" ? "null" : stdout)
  } catch {
    return []
  }
  const list = Schema.decodeUnknownOption(Deprecations)(parsed)
  if (list._tag === "None" || list.value === null) return []
  return list.value
    .filter((d) => {
      const t = Date.parse(d.lastOccurrence ?? "")
      return Number.isFinite(t) && nowMs - t <= WINDOW_MS
    })
    .map((d) => ({ id: d.id, message: d.message ?? "" }))
}

export const containerdDeprecationsCheck = (
  runner: CommandRunner["Service"],
  intervalMs: number
): PeriodicCheck => ({
  name: "containerd-deprecations",
  monitor: "container-runtime",
  intervalMs,
  run: (tick) =>
    runner.run("ctr", ["deprecations", "list", "--format", "json"], { timeoutMs: 10_000 }).pipe(
      Effect.flatMap((r) =>
        r.exitCode !== 0
          ? Effect.logWarning("ctr deprecations list failed", { error: exitDetail(r) }).pipe(
              Effect.as([] as Finding[])
            )
          : Effect.succeed(
              recentDeprecations(r.stdout, tick.nowMs).map(
                (d): Finding =>
                  detection("DeprecatedContainerdConfiguration", `${d.id}: ${d.message}`, tick.nowMs, d.id)
              )
            )
      ),
      Effect.catch((e) =>
        Effect.logWarning("ctr deprecations list failed", { error: e.message }).pipe(
          Effect.as([] as Finding[])
        )
      )
    )
})
