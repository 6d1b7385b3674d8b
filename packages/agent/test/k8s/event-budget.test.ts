import { describe, expect, it } from "vitest"
import { takeToken, type Bucket } from "../../src/k8s/event-budget.ts"

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
