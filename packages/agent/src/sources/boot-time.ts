/**
 * Wall-clock boot time of the host, to turn /dev/kmsg's monotonic microseconds into wall time:
 * `btime` of <host>/proc/stat (whole seconds), else now - <host>/proc/uptime. `undefined` when neither
 * can be read; callers then stamp records with the time they read them.
 */
import { promises as fsp } from "node:fs"
import { join } from "node:path"

export const readBootTimeMs = async (
  hostRoot: string,
  // Raw default only for callers outside Effect; the kmsg reader passes the agent's Clock.
  nowMs: number = Date.now()
): Promise<number | undefined> => {
  const stat = await fsp.readFile(join(hostRoot, "proc/stat"), "utf8").catch(() => undefined)
  const btime = stat === undefined ? undefined : /^btime (\d+)$/m.exec(stat)?.[1]
  if (btime !== undefined) return Number(btime) * 1000
  const uptime = await fsp.readFile(join(hostRoot, "proc/uptime"), "utf8").catch(() => undefined)
  const seconds = uptime === undefined ? Number.NaN : Number.parseFloat(uptime)
  return Number.isFinite(seconds) ? nowMs - Math.round(seconds * 1000) : undefined
}
