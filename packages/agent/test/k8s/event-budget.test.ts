import { describe, expect, it } from "vitest"
import { EventBudgets, reasonBudget, takeToken, type Bucket } from "../../src/k8s/event-budget.ts"

describe("event budget", () => {
  const budget = { burst: 3, refillSeconds: 10 }
  const spend = (times: number, at: number, from?: Bucket) => {
    let b = from
    const oks: boolean[] = []
    for (let i = 0; i < times; i++) {
      const r = takeToken(b, at, budget)
      oks.push(r.ok)
      b = r.bucket
    }
    return { oks, bucket: b! }
  }
  it("allows a burst, then refuses until a token refills", () => {
    const a = spend(5, 0)
    expect(a.oks).toEqual([true, true, true, false, false])
    expect(spend(1, 9_999, a.bucket).oks).toEqual([false])
    expect(spend(2, 10_000, a.bucket).oks).toEqual([true, false])
  })
  it("never holds more than the burst", () => {
    const a = spend(1, 0)
    expect(spend(4, 1_000_000, a.bucket).oks).toEqual([true, true, true, false])
  })
  it("buckets are independent values (one per monitor)", () => {
    const noisy = spend(10, 0)
    expect(noisy.oks.filter(Boolean)).toHaveLength(3)
    expect(spend(1, 0).oks).toEqual([true])
  })
})

describe("event budgets per monitor and reason (issue #27)", () => {
  const ceiling = { burst: 6, refillSeconds: 60 }
  const WINDOW = 600_000
  const storm = (b: EventBudgets, monitor: string, reason: string, times: number, at: number) =>
    Array.from({ length: times }, () => b.take(monitor, reason, at, ceiling))

  it("a reason's bucket is half the ceiling's burst, at least 1", () => {
    expect(reasonBudget({ burst: 25, refillSeconds: 300 })).toEqual({ burst: 13, refillSeconds: 300 })
    expect(reasonBudget({ burst: 1, refillSeconds: 5 })).toEqual({ burst: 1, refillSeconds: 5 })
  })

  it("a storm of reason A is bounded by A's bucket; a reason B seen after it is let through at once", () => {
    const b = new EventBudgets(WINDOW)
    const a = storm(b, "kernel", "SoftLockup", 1000, 0)
    expect(a[0]).toBe("first")
    expect(a.filter((v) => v === "repeat")).toHaveLength(2) // 1 first + 2 repeats = A's 3 tokens
    expect(a.filter((v) => v === "throttled")).toHaveLength(997)
    // Same millisecond, no refill: B is new, so it is let through; B's repeats use what A left of the ceiling.
    const bs = storm(b, "kernel", "ConntrackExceededKernel", 10, 0)
    expect(bs[0]).toBe("first")
    expect(bs.filter((v) => v !== "throttled")).toHaveLength(3)
    expect(b.drainThrottled(0)).toEqual([
      { monitor: "kernel", reason: "SoftLockup", count: 997 },
      { monitor: "kernel", reason: "ConntrackExceededKernel", count: 7 }
    ])
    expect(b.drainThrottled(0)).toEqual([])
  })

  it("a first occurrence gets through an exhausted ceiling; the ceiling still bounds the repeats of all reasons", () => {
    const b = new EventBudgets(WINDOW)
    const reasons = ["R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8"]
    // Each reason once: all first occurrences, though the ceiling (6) is spent after six of them.
    expect(reasons.map((r) => b.take("storage", r, 0, ceiling))).toEqual(reasons.map(() => "first"))
    // Their repeats: the ceiling is empty, whatever each reason's own bucket holds.
    expect(reasons.map((r) => b.take("storage", r, 0, ceiling))).toEqual(reasons.map(() => "throttled"))
    // One ceiling token refills in 60 s: one repeat.
    expect(
      reasons.map((r) => b.take("storage", r, 60_000, ceiling)).filter((v) => v === "repeat")
    ).toHaveLength(1)
  })

  it("monitors are independent: a storm in one leaves another's ceiling whole", () => {
    const b = new EventBudgets(WINDOW)
    storm(b, "kernel", "SoftLockup", 100, 0)
    expect(storm(b, "storage", "BlockDeviceIOError", 5, 0)).toEqual([
      "first",
      "repeat",
      "repeat",
      "throttled",
      "throttled"
    ])
  })

  it("a reason is new again once it was not seen for the window; a storm that goes on never is", () => {
    const b = new EventBudgets(WINDOW)
    storm(b, "kernel", "SoftLockup", 10, 0)
    // Seen every minute for 20 minutes: repeats, throttled while A's bucket (1 token / 60 s) is spent.
    for (let t = 60_000; t <= 20 * 60_000; t += 60_000)
      expect(b.take("kernel", "SoftLockup", t, ceiling)).not.toBe("first")
    expect(b.take("kernel", "SoftLockup", 20 * 60_000 + WINDOW - 1, ceiling)).not.toBe("first")
    expect(b.take("kernel", "SoftLockup", 20 * 60_000 + 2 * WINDOW, ceiling)).toBe("first")
  })

  it("drainThrottled forgets reasons out of the window (bounded state)", () => {
    const b = new EventBudgets(WINDOW)
    storm(b, "kernel", "SoftLockup", 10, 0)
    expect(b.drainThrottled(WINDOW)).toEqual([{ monitor: "kernel", reason: "SoftLockup", count: 7 }])
    expect(b.take("kernel", "SoftLockup", WINDOW, ceiling)).toBe("first")
  })
})
