import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { httpKubeError, type KubeHttp } from "@nodemend/kube-access"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { defaultConfig } from "../src/config/ControllerConfig.ts"
import { makeNodeCache } from "../src/controller/NodeCache.ts"
import { HttpStatusError } from "../src/kube/KubeHttp.ts"

const node = (name: string, rv: string) => ({ metadata: { name, resourceVersion: rv } })

/**
 * The informer's loop with a scripted connection (the real API server is in the cluster tests; an ERROR event
 * or a 410 cannot be provoked there on demand). `lists[i]` answers the i-th list (the last one repeats); watch
 * `i` replays `watches[i]` and ends, and a watch past the script stays open until interrupted.
 */
const scripted = (
  lists: ReadonlyArray<ReadonlyArray<object>>,
  watches: ReadonlyArray<ReadonlyArray<unknown>>
) => {
  const requests: string[] = []
  let listed = 0
  let watched = 0
  const http: KubeHttp = {
    server: "https://x",
    stream: () => Promise.reject(new Error("not scripted")),
    call: () =>
      Effect.sync(() => {
        requests.push("LIST")
        const items = lists[Math.min(listed++, lists.length - 1)]
        return { metadata: { resourceVersion: String(10 * listed) }, items }
      }),
    watch: (_op, path, onEvent) =>
      Effect.suspend(() => {
        requests.push(`WATCH rv=${new URL(path, "https://x").searchParams.get("resourceVersion")}`)
        const events = watches[watched++]
        if (events === undefined) return Effect.never
        for (const e of events) onEvent(e)
        return Effect.void
      }),
    close: () => undefined
  }
  return { http, requests }
}

/** Real time: the loop's fiber runs on Effect's own scheduler. */
const SOON = { timeoutMs: 5000, intervalMs: 10 }

describe("NodeCache watch loop", () => {
  it("a watch ended by a non-410 ERROR event (504 too large resource version) waits 2 s before re-watching", async () => {
    const tooLarge = { type: "ERROR", object: { kind: "Status", code: 504, reason: "Timeout" } }
    const { http, requests } = scripted([[]], [[tooLarge]])
    const warnings: string[] = []
    const cache = makeNodeCache(
      http,
      defaultConfig(),
      () => undefined,
      (_level, msg) => warnings.push(msg)
    )
    const started = performance.now()
    await cache.start()
    await waitFor(
      "3 requests",
      (seen) => {
        seen(requests)
        return requests.length === 3
      },
      SOON
    )
    expect(performance.now() - started).toBeGreaterThanOrEqual(1990)
    expect(requests).toEqual(["LIST", "WATCH rv=10", "WATCH rv=10"])
    expect(warnings).toEqual(["node watch failed; again in 2s"])
    await cache.stop()
  })

  it("a 410 relists, and a cached Node missing from the new list is gone; bookmarks move the resume point", async () => {
    const changed: string[] = []
    const { http, requests } = scripted(
      [[node("a", "1"), node("b", "2")], [node("b", "2")]],
      [
        [{ type: "BOOKMARK", object: { metadata: { resourceVersion: "15" } } }],
        [{ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } }]
      ]
    )
    const cache = makeNodeCache(
      http,
      defaultConfig(),
      (name) => changed.push(name),
      () => undefined
    )
    await cache.start()
    expect([...cache.names()].sort()).toEqual(["a", "b"])
    await waitFor(
      "5 requests",
      (seen) => {
        seen(requests)
        return requests.length === 5
      },
      SOON
    )
    expect(requests).toEqual(["LIST", "WATCH rv=10", "WATCH rv=15", "LIST", "WATCH rv=20"])
    expect(cache.names()).toEqual(["b"])
    expect(changed).toEqual(["a", "b", "a"])
    await cache.stop()
  })

  it("the first list's HTTP failure reaches the start with its status (initialSync retries or exits on it)", async () => {
    const http: KubeHttp = {
      ...scripted([[]], []).http,
      call: (op) =>
        Effect.fail(httpKubeError(op, 403, JSON.stringify({ reason: "Forbidden", message: "no" })))
    }
    const cache = makeNodeCache(
      http,
      defaultConfig(),
      () => undefined,
      () => undefined
    )
    const failure = await cache.start().then(
      () => undefined,
      (e: unknown) => e
    )
    expect(failure).toBeInstanceOf(HttpStatusError)
    expect((failure as HttpStatusError).statusCode).toBe(403)
    expect(cache.synced()).toBe(false)
  })
})
