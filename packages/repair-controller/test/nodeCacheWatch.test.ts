import { getEventListeners } from "node:events"
import { afterEach, describe, expect, it, vi } from "vitest"
import { defaultConfig } from "../src/config/ControllerConfig.ts"
import { makeNodeCache } from "../src/controller/NodeCache.ts"
import type { KubeHttp, WatchEvent } from "../src/kube/KubeHttp.ts"

/**
 * The informer's loop with a scripted connection (the real API server is in the cluster tests; an ERROR event
 * cannot be provoked there on demand). After `maxWatches` watches the next one stays open until aborted.
 */
const scripted = (events: ReadonlyArray<WatchEvent>, maxWatches: number) => {
  let watches = 0
  const http: KubeHttp = {
    server: "https://x",
    request: async () => ({
      status: 200,
      text: JSON.stringify({ metadata: { resourceVersion: "10" }, items: [] })
    }),
    watch: async (_path, onEvent, signal) => {
      watches++
      if (watches > maxWatches)
        return new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => resolve(), { once: true })
        )
      for (const e of events) onEvent(e)
    },
    close: () => undefined
  }
  return { http, watches: () => watches }
}

afterEach(() => {
  vi.useRealTimers()
})

describe("NodeCache watch loop", () => {
  it("a watch ended by a non-410 ERROR event (504 too large resource version) waits before re-watching", async () => {
    vi.useFakeTimers()
    const tooLarge: WatchEvent = { type: "ERROR", object: { kind: "Status", code: 504, reason: "Timeout" } }
    const { http, watches } = scripted([tooLarge], 20)
    const cache = makeNodeCache(
      http,
      defaultConfig(),
      () => undefined,
      () => undefined
    )
    await cache.start()
    await vi.advanceTimersByTimeAsync(0)
    expect(watches()).toBe(1)
    await vi.advanceTimersByTimeAsync(1999)
    expect(watches()).toBe(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(watches()).toBe(2)
    await cache.stop()
  })

  it("retries through an API outage leave no abort listeners behind", async () => {
    vi.useFakeTimers()
    const signals = new Set<AbortSignal>()
    const add = AbortSignal.prototype.addEventListener
    const spy = vi.spyOn(AbortSignal.prototype, "addEventListener").mockImplementation(function (
      this: AbortSignal,
      ...args: Parameters<AbortSignal["addEventListener"]>
    ) {
      signals.add(this)
      return add.apply(this, args)
    })
    try {
      const { http } = scripted([], 0)
      const down: KubeHttp = {
        ...http,
        watch: async () => {
          throw new Error("connect ECONNREFUSED")
        }
      }
      const cache = makeNodeCache(
        down,
        defaultConfig(),
        () => undefined,
        () => undefined
      )
      await cache.start()
      // 30 failed watches, 2 s apart.
      await vi.advanceTimersByTimeAsync(60_000)
      const most = Math.max(0, ...[...signals].map((s) => getEventListeners(s, "abort").length))
      expect(most).toBeLessThanOrEqual(1)
      await cache.stop()
    } finally {
      spy.mockRestore()
    }
  })
})
