import { it as effectIt } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { KubeError } from "../src/KubeError.ts"
import type { KubeHttp } from "../src/KubeHttp.ts"
import { listWatch, watchBackoff, watchEndOf } from "../src/ListWatch.ts"

/** Lets the forked loop run until it waits on the clock (or on a watch that never ends). */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 50; i++) yield* Effect.yieldNow
})
const advance = (d: Duration.Input) => TestClock.adjust(d).pipe(Effect.andThen(settle))

const httpError = (code: number | undefined) =>
  new KubeError({ operation: "watch", code, reason: undefined, message: "" })

describe("watchBackoff", () => {
  it("re-watches at once after a normal end or 410 Gone, slowly after HTTP errors (no CRD), briefly after network errors", () => {
    expect(watchBackoff({ _tag: "Ended" }, 0)).toEqual(Duration.zero)
    expect(watchEndOf(httpError(410))).toEqual({ _tag: "Expired" })
    expect(watchBackoff(watchEndOf(httpError(410)), 0)).toEqual(Duration.zero)
    const notFound = watchEndOf(httpError(404))
    expect(notFound).toEqual({ _tag: "HttpError", code: 404 })
    expect(watchBackoff(notFound, 1)).toEqual(Duration.seconds(1))
    expect(watchBackoff(notFound, 3)).toEqual(Duration.seconds(4))
    expect(watchBackoff(notFound, 20)).toEqual(Duration.seconds(60))
    expect(watchEndOf(httpError(undefined))).toEqual({ _tag: "NetworkError" })
    expect(watchBackoff(watchEndOf(httpError(undefined)), 0)).toEqual(Duration.seconds(2))
  })
})

/**
 * The loop's bookkeeping with a scripted connection (the real API server is in
 * packages/agent/test/integration/list-watch.test.ts; a 410 cannot be provoked there on demand).
 */
const scripted = (watches: ReadonlyArray<{ events: unknown[]; fail?: KubeError }>) => {
  const requests: string[] = []
  let listRv = 10
  let next = 0
  const http: KubeHttp = {
    server: "https://x",
    stream: () => Promise.reject(new Error("not scripted")),
    // Like the real connection, nothing is sent before the Effect runs.
    call: (_op, _method, path) =>
      Effect.sync(() => {
        requests.push(`LIST ${new URL(path, "https://x").searchParams.get("fieldSelector")}`)
        listRv += 10
        return {
          metadata: { resourceVersion: String(listRv) },
          items: [{ metadata: { name: "a", resourceVersion: String(listRv) } }]
        }
      }),
    watch: (_op, path, onEvent) =>
      Effect.suspend(() => {
        requests.push(`WATCH rv=${new URL(path, "https://x").searchParams.get("resourceVersion")}`)
        const script = watches[next++]
        if (script === undefined) return Effect.never
        for (const e of script.events) onEvent(e)
        return script.fail === undefined ? Effect.void : Effect.fail(script.fail)
      }),
    close: () => undefined
  }
  return { http, requests }
}

describe("listWatch", () => {
  effectIt.effect(
    "resumes from the last resourceVersion, relists on 410 Gone, backs off on HTTP errors",
    () =>
      Effect.gen(function* () {
        const { http, requests } = scripted([
          {
            events: [
              { type: "ADDED", object: { metadata: { name: "a", resourceVersion: "21" } } },
              { type: "BOOKMARK", object: { metadata: { resourceVersion: "25" } } }
            ]
          },
          { events: [{ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } }] },
          { events: [], fail: httpError(404) },
          { events: [], fail: httpError(404) },
          {
            events: [
              "not json",
              { type: "MODIFIED", object: { metadata: { name: "a", resourceVersion: "31" } } }
            ]
          }
        ])
        const seen: string[] = []
        const fiber = yield* listWatch({
          http,
          path: "/api/v1/configmaps",
          query: { fieldSelector: "metadata.name=a" },
          onObject: (type, o) =>
            seen.push(`${type} ${(o as { metadata: { resourceVersion: string } }).metadata.resourceVersion}`)
        }).pipe(Effect.forkChild)
        yield* settle
        // list, watch (ends), watch from the bookmark (410), relist, watch (404): now waiting 1 s.
        expect(requests).toEqual([
          "LIST metadata.name=a",
          "WATCH rv=20",
          "WATCH rv=25",
          "LIST metadata.name=a",
          "WATCH rv=30"
        ])
        yield* advance("999 millis")
        expect(requests).toHaveLength(5)
        yield* advance("1 millis")
        // Second 404: waiting 2 s.
        expect(requests).toHaveLength(6)
        yield* advance("1999 millis")
        expect(requests).toHaveLength(6)
        yield* advance("1 millis")
        // The watch that succeeds is followed at once by one from its last event.
        expect(requests.slice(5)).toEqual(["WATCH rv=30", "WATCH rv=30", "WATCH rv=31"])
        expect(seen).toEqual(["LISTED 20", "ADDED 21", "LISTED 30", "MODIFIED 31"])
        yield* Fiber.interrupt(fiber)
      })
  )

  effectIt.effect(
    "a watch ended by a non-410 ERROR event (504 too large resource version) backs off, not a hot loop",
    () =>
      Effect.gen(function* () {
        const tooLarge = { type: "ERROR", object: { kind: "Status", code: 504, reason: "Timeout" } }
        const { http, requests } = scripted([{ events: [tooLarge] }, { events: [tooLarge] }])
        const fiber = yield* listWatch({
          http,
          path: "/api/v1/configmaps",
          query: {},
          onObject: () => undefined
        }).pipe(Effect.forkChild)
        yield* settle
        expect(requests).toEqual(["LIST null", "WATCH rv=20"])
        yield* advance("999 millis")
        expect(requests).toHaveLength(2)
        yield* advance("1 millis")
        expect(requests).toEqual(["LIST null", "WATCH rv=20", "WATCH rv=20"])
        yield* advance("1999 millis")
        expect(requests).toHaveLength(3)
        yield* advance("1 millis")
        expect(requests).toHaveLength(4)
        yield* Fiber.interrupt(fiber)
      })
  )
})

describe("listWatch paging", () => {
  effectIt.effect(
    "lists page by page with continue tokens, tells the start and the end of each list, watches from the first page's version",
    () =>
      Effect.gen(function* () {
        const requests: string[] = []
        const pages: Record<string, unknown> = {
          "": { metadata: { resourceVersion: "40", continue: "t1" }, items: [{ metadata: { name: "a" } }] },
          t1: { metadata: { resourceVersion: "40" }, items: [{ metadata: { name: "b" } }] }
        }
        const http: KubeHttp = {
          server: "https://x",
          stream: () => Promise.reject(new Error("not scripted")),
          call: (_op, _method, path) =>
            Effect.sync(() => {
              const q = new URL(path, "https://x").searchParams
              requests.push(`LIST limit=${q.get("limit")} continue=${q.get("continue")}`)
              return pages[q.get("continue") ?? ""]
            }),
          watch: (_op, path) =>
            Effect.suspend(() => {
              requests.push(`WATCH rv=${new URL(path, "https://x").searchParams.get("resourceVersion")}`)
              return Effect.never
            }),
          close: () => undefined
        }
        const seen: string[] = []
        const fiber = yield* listWatch({
          http,
          path: "/api/v1/nodes",
          query: {},
          pageSize: 1,
          onListStart: () => seen.push("start"),
          onObject: (type, o) => seen.push(`${type} ${(o as { metadata: { name: string } }).metadata.name}`),
          onSynced: () => seen.push("synced")
        }).pipe(Effect.forkChild)
        yield* settle
        expect(requests).toEqual(["LIST limit=1 continue=null", "LIST limit=1 continue=t1", "WATCH rv=40"])
        expect(seen).toEqual(["start", "LISTED a", "LISTED b", "synced"])
        yield* Fiber.interrupt(fiber)
      })
  )
})
