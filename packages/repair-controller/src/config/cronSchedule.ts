/**
 * Karpenter's cron schedules and durations as the NodePool CRD and robfig/cron read them (see
 * decide/budgetWindow.ts, which evaluates them): the patterns, the macros, the 5-field parse in UTC and the
 * duration's units. Here so that the config file can check a schedule (maintenance windows) with the same rules
 * the decisions use. Pure.
 */
import { Cron, DateTime, Result } from "effect"

/** The NodePool CRD's patterns (nodepool.go, `Budget`). `schedule`'s is matched as the API server matches it. */
export const NODES = /^((100|[0-9]{1,2})%|[0-9]+)$/
export const DURATION = /^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$/
export const SCHEDULE =
  /^(@(annually|yearly|monthly|weekly|daily|midnight|hourly))|((.+)\s(.+)\s(.+)\s(.+)\s(.+))$/

/** robfig/cron's descriptors (parser.go `parseDescriptor`), as the 5-field expressions they stand for. */
const MACROS: Readonly<Record<string, string>> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *"
}

const UTC = DateTime.zoneMakeNamedUnsafe("UTC")

/** robfig's star bit: a `*` or `?` part without a step above 1 makes day-of-month and day-of-week match with "and". */
const starred = (field: string) =>
  field.split(",").some((part) => {
    const [range, step] = part.split("/")
    return (range === "*" || range === "?") && (step === undefined || Number(step) <= 1)
  })

/**
 * A small memo (same answer for the same key): decisions read the same few budgets for every node of a pool.
 * Emptied when full: the budgets in use are few, a NodePool holds at most 50.
 */
export const memo = <A>(size: number) => {
  const m = new Map<string, A>()
  return (key: string, f: () => A): A => {
    const known = m.get(key)
    if (known !== undefined) return known
    if (m.size >= size) m.clear()
    const a = f()
    m.set(key, a)
    return a
  }
}
const parsedSchedules = memo<Result.Result<Cron.Cron, string>>(512)

/** Parses a schedule as Karpenter does: macros, else exactly 5 fields in UTC. */
export const parseSchedule = (schedule: string): Result.Result<Cron.Cron, string> =>
  parsedSchedules(schedule, () => parseUncached(schedule))

const parseUncached = (schedule: string): Result.Result<Cron.Cron, string> => {
  const text = schedule.trim()
  const expr = MACROS[text] ?? text
  if (expr.startsWith("@")) return Result.fail(`unknown macro ${text}`)
  const fields = expr.split(/\s+/)
  if (fields.length !== 5) return Result.fail(`expected 5 fields, found ${fields.length}`)
  // robfig's day-of-week ends at 6 (Effect's takes 7 for Sunday too).
  const weekdays = fields[4]!.split(",").flatMap((part) => part.split("/")[0]!.split("-"))
  if (weekdays.some((v) => /^\d+$/.test(v) && Number(v) > 6))
    return Result.fail(`day of week above 6 in "${fields[4]}"`)
  const parsed = Cron.parse(fields.map((f) => f.replaceAll("?", "*")).join(" "), UTC)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure.message)
  const c = parsed.success
  return Result.succeed(
    Cron.make({
      minutes: c.minutes,
      hours: c.hours,
      days: c.days,
      months: c.months,
      weekdays: c.weekdays,
      and: starred(fields[2]!) || starred(fields[4]!),
      tz: UTC
    })
  )
}

/** `8h`, `30m`, `1h30m`, `8h0m0s` (the CRD's forms) in ms. */
export const durationMs = (d: string): number => {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:0s)?$/.exec(d)
  return (Number(m?.[1] ?? 0) * 60 + Number(m?.[2] ?? 0)) * 60_000
}

/** Why Karpenter would refuse this schedule and duration; undefined when it takes them. */
export const scheduleProblem = (schedule: string, duration: string): string | undefined => {
  if (!DURATION.test(duration)) return `duration "${duration}" is not minutes and hours (e.g. 8h, 1h30m)`
  if (!SCHEDULE.test(schedule)) return `schedule "${schedule}" is not a cron expression`
  const parsed = parseSchedule(schedule)
  return Result.isFailure(parsed) ? `schedule "${schedule}": ${parsed.failure}` : undefined
}
