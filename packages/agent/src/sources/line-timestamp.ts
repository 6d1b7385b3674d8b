/**
 * The time a plain-file log line was written, from the line itself: zap JSON `"ts":"<ISO>"` (VPC CNI,
 * network policy agent), a leading RFC 3339 time (CRI container logs, older ipamd), or a syslog
 * `Mmm dd HH:MM:SS` prefix (year taken from `nowMs`, local time of the agent). Falls back to `nowMs`.
 */
const MONTHS: Readonly<Record<string, number>> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11
}
const ISO_PREFIX = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d))/
const JSON_TS = /"ts":"(\d{4}-\d\d-\d\dT[^"]+)"/
const SYSLOG_PREFIX = /^([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d)/

export const lineTimestamp = (line: string, nowMs: number): number => {
  const iso = ISO_PREFIX.exec(line) ?? JSON_TS.exec(line)
  if (iso !== null) {
    const t = Date.parse(iso[1]!)
    if (Number.isFinite(t)) return t
  }
  const sys = SYSLOG_PREFIX.exec(line)
  if (sys !== null) {
    const month = MONTHS[sys[1]!]
    if (month !== undefined) {
      const now = new Date(nowMs)
      const at = (year: number) =>
        new Date(year, month, Number(sys[2]), Number(sys[3]), Number(sys[4]), Number(sys[5])).getTime()
      const t = at(now.getFullYear())
      // December lines read in January belong to last year.
      return t > nowMs + 86_400_000 ? at(now.getFullYear() - 1) : t
    }
  }
  return nowMs
}
