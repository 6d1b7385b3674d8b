/**
 * {Unit}RepeatedRestart (reference 2.4) from `systemctl show --property=Id,NRestarts '*.service'` on the
 * host (NMA uses D-Bus). A unit is reported when its NRestarts exceeds the threshold and grew since the
 * previous sample; the first sample only records, so restarts from before the agent started never fire.
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { type CommandRunner, exitDetail } from "./command-runner.ts"
import { detection } from "./finding.ts"

export const parseSystemctlShow = (stdout: string): Map<string, number> => {
  const out = new Map<string, number>()
  for (const block of stdout.split(/\n\s*\n/)) {
    const props = new Map(
      block
        .split("\n")
        .map((l) => l.split("="))
        .filter((kv) => kv.length >= 2)
        .map(([k, ...v]) => [k!.trim(), v.join("=").trim()] as const)
    )
    const id = props.get("Id")
    const n = Number(props.get("NRestarts"))
    if (id?.endsWith(".service") && Number.isFinite(n)) out.set(id.slice(0, -".service".length), n)
  }
  return out
}

/** `nvidia-persistenced` -> `Nvidia-Persistenced`, as NMA names the reason. */
export const unitReasonName = (unit: string): string =>
  unit
    .split("-")
    .map((w) => (w === "" ? w : w[0]!.toUpperCase() + w.slice(1).toLowerCase()))
    .join("-")
    .replace(/[^A-Za-z0-9@_.:-]/g, "_")

export const systemdRestartsCheck = (
  runner: CommandRunner["Service"],
  threshold: number,
  intervalMs: number
): PeriodicCheck => {
  let previous: Map<string, number> | undefined
  return {
    name: "systemd-restarts",
    monitor: "container-runtime",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const r = yield* runner
          .run("systemctl", ["show", "--property=Id,NRestarts", "*.service"], { timeoutMs: 10_000 })
          .pipe(
            Effect.catch((e) =>
              Effect.logWarning("systemctl show failed", { error: e.message }).pipe(Effect.as(undefined))
            )
          )
        if (r === undefined) return []
        if (r.exitCode !== 0) {
          yield* Effect.logWarning("systemctl show failed", { error: exitDetail(r) })
          return []
        }
        const current = parseSystemctlShow(r.stdout)
        const out: Finding[] = []
        if (previous !== undefined) {
          for (const [unit, n] of current) {
            const before = previous.get(unit)
            if (before !== undefined && n > before && n > threshold)
              out.push(
                detection(
                  `${unitReasonName(unit)}RepeatedRestart`,
                  `Systemd unit "${unit}" has restarted (NRestarts ${before} -> ${n})`,
                  tick.nowMs,
                  unit
                )
              )
          }
        }
        previous = current
        return out
      })
  }
}
