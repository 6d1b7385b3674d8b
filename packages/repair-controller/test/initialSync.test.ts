import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import {
  INITIAL_LIST_CAP,
  InitialListFailed,
  initialListFailed,
  isFatalListFailure,
  retryInitialList
} from "../src/controller/initialSync.ts"
import { HttpStatusError } from "../src/kube/KubeHttp.ts"

const failed = (code: number | undefined) => new InitialListFailed({ code, message: `failed ${code}` })

/** An initial list that fails with `errors[i]` on attempt i and succeeds after them; records attempt times. */
const scripted = (errors: ReadonlyArray<InitialListFailed>) => {
  const at: number[] = []
  const attempt = Effect.gen(function* () {
    at.push(yield* Clock.currentTimeMillis)
    const e = errors[at.length - 1]
    if (e !== undefined) return yield* e
  })
  return { attempt, at }
}

/** Advances virtual time in 100 ms steps until the fiber ends (or `limitMs` passes). */
const runOut = <A, E>(fiber: Fiber.Fiber<A, E>, limitMs: number) =>
  Effect.gen(function* () {
    for (let t = 0; t < limitMs && fiber.pollUnsafe() === undefined; t += 100)
      yield* TestClock.adjust("100 millis")
  })

describe("initial node list retry (TestClock)", () => {
  it.effect("an API server that is down at start is retried with capped, jittered exponential backoff", () =>
    Effect.gen(function* () {
      const s = scripted(Array.from({ length: 9 }, () => failed(undefined)))
      const fiber = yield* Effect.forkChild(retryInitialList(s.attempt))
      yield* runOut(fiber, 10 * 60_000)
      yield* Fiber.join(fiber)
      expect(s.at).toHaveLength(10)
      const gaps = s.at.slice(1).map((t, i) => t - s.at[i]!)
      const cap = Duration.toMillis(INITIAL_LIST_CAP)
      gaps.forEach((gap, i) => {
        const nominal = 1000 * 2 ** i
        // jitter scales each delay by 0.8-1.2 (to the 100 ms step of the virtual clock), and none passes the cap
        expect(gap).toBeGreaterThanOrEqual(Math.min(0.8 * nominal, cap) - 100)
        expect(gap).toBeLessThanOrEqual(Math.min(1.2 * nominal, cap) + 100)
      })
      // From the 7th retry on (nominal 64 s and up, at least 51 s after jitter) every delay is the cap.
      expect(gaps.slice(6).map((g) => Math.abs(g - cap) <= 100)).toEqual([true, true, true])
    })
  )

  it.effect("401 and 403 are retried too (credentials rotate)", () =>
    Effect.gen(function* () {
      const s = scripted([failed(401), failed(403), failed(503)])
      const fiber = yield* Effect.forkChild(retryInitialList(s.attempt))
      yield* runOut(fiber, 60_000)
      yield* Fiber.join(fiber)
      expect(s.at).toHaveLength(4)
    })
  )

  it.effect(
    "400 (a nodeSelector the server cannot parse) and 404 (no Node API there) end the start at once",
    () =>
      Effect.gen(function* () {
        for (const code of [400, 404]) {
          const s = scripted([failed(code), failed(code)])
          const fiber = yield* Effect.forkChild(retryInitialList(s.attempt))
          yield* runOut(fiber, 60_000)
          const e = yield* Effect.flip(Fiber.join(fiber))
          expect(e.code).toBe(code)
          expect(s.at).toHaveLength(1)
        }
      })
  )

  it("maps an HTTP error to its status and a transport error to no status", () => {
    expect(initialListFailed(new HttpStatusError(403, "forbidden")).code).toBe(403)
    expect(initialListFailed(new Error("connect ECONNREFUSED 127.0.0.1:1")).code).toBeUndefined()
    expect(isFatalListFailure(failed(403))).toBe(false)
    expect(isFatalListFailure(failed(undefined))).toBe(false)
    expect(isFatalListFailure(failed(400))).toBe(true)
  })
})
