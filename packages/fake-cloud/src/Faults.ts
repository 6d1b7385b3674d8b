/**
 * Injected faults, consumed in order before a request is served. `throttle` answers like a throttled
 * AWS API (EC2 `RequestLimitExceeded` 503, ARC `ThrottlingException` 429, Auto Scaling `Throttling` 400),
 * `error` like a server failure (EC2 `InternalError` 500 / ARC `InternalServerException` 500 / Auto Scaling
 * `InternalFailure` 500), `slow` serves the request
 * and then holds the answer `delayMs` (a client timeout after the effect happened).
 */
import { Schema } from "effect"

export const FaultSpec = Schema.Struct({
  kind: Schema.Literals(["throttle", "error", "slow"]),
  /** Which API: `ec2`, `arc`, `autoScaling` or `any` (default). */
  target: Schema.optionalKey(Schema.Literals(["ec2", "arc", "autoScaling", "any"])),
  /** Only this EC2 action / ARC operation (e.g. `TerminateInstances`, `GetManagedResource`). */
  action: Schema.optionalKey(Schema.String),
  /** How many requests it hits; default 1. */
  count: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  /** `error`: the HTTP status (default 500; 503 gives EC2 `Unavailable`). */
  status: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 500, maximum: 599 }))),
  /** `slow`: milliseconds to hold the answer (default 5000). */
  delayMs: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 600_000 })))
})
export type FaultSpec = typeof FaultSpec.Type

export type Api = "ec2" | "arc" | "autoScaling"

export interface ActiveFault {
  readonly spec: FaultSpec
  remaining: number
  hits: number
}

export class Faults {
  readonly #faults: ActiveFault[] = []

  add(spec: FaultSpec): ActiveFault {
    const f = { spec, remaining: spec.count ?? 1, hits: 0 }
    this.#faults.push(f)
    return f
  }

  clear(): void {
    this.#faults.length = 0
  }

  list(): ReadonlyArray<ActiveFault> {
    return this.#faults
  }

  /** The fault this request hits (and uses up), if any. */
  take(api: Api, action: string): FaultSpec | undefined {
    const f = this.#faults.find(
      (f) =>
        f.remaining > 0 &&
        ((f.spec.target ?? "any") === "any" || f.spec.target === api) &&
        (f.spec.action === undefined || f.spec.action === action)
    )
    if (!f) return undefined
    f.remaining--
    f.hits++
    if (f.remaining === 0) this.#faults.splice(this.#faults.indexOf(f), 1)
    return f.spec
  }
}
