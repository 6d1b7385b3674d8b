import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { httpKubeError, type KubeError } from "../src/KubeError.ts"
import { ListExpired, listAllPages, MAX_LIST_RESTARTS } from "../src/PagedList.ts"
import type { List } from "../src/types.ts"

const expired = () =>
  httpKubeError(
    "listPods",
    410,
    JSON.stringify({ kind: "Status", code: 410, reason: "Expired", message: "continue parameter is too old" })
  )

/**
 * A list of `items` served `pageSize` at a time, whose continue tokens carry the snapshot they belong to;
 * `failContinue(n)` decides whether the n-th continue request (1-based) answers 410. The real API server with
 * a fault proxy is in test/integration/apiFaults.test.ts.
 */
const server = (items: ReadonlyArray<string>, pageSize: number, failContinue: (n: number) => boolean) => {
  const requests: Array<string | undefined> = []
  let continues = 0
  let snapshot = 0
  const fetchPage = (cont: string | undefined): Effect.Effect<List<string>, KubeError> =>
    Effect.suspend(() => {
      requests.push(cont)
      if (cont === undefined) snapshot++
      else if (failContinue(++continues)) return Effect.fail(expired())
      const [snap, from] = cont === undefined ? [snapshot, 0] : cont.split(":").map(Number)
      const next = from! + pageSize
      return Effect.succeed({
        metadata: next < items.length ? { continue: `${snap}:${next}` } : {},
        items: items.slice(from, next).map((i) => `${i}@${snap}`)
      })
    })
  return { fetchPage, requests }
}

describe("listAllPages", () => {
  it.effect(
    "a 410 on a continue request restarts from the first page; no page of the old snapshot is kept",
    () =>
      Effect.gen(function* () {
        const s = server(["a", "b", "c", "d", "e"], 2, (n) => n === 2)
        const restarts: number[] = []
        const out = yield* listAllPages("listPods", s.fetchPage, (r) => Effect.sync(() => restarts.push(r)))
        expect(out).toEqual(["a@2", "b@2", "c@2", "d@2", "e@2"])
        expect(restarts).toEqual([1])
        // first attempt: page 1, page 2, page 3 (410); then a fresh list with no continue token.
        expect(s.requests).toEqual([undefined, "1:2", "1:4", undefined, "2:2", "2:4"])
      })
  )

  it.effect("every fresh list expiring too ends in ListExpired after the bounded restarts", () =>
    Effect.gen(function* () {
      const s = server(["a", "b", "c"], 2, () => true)
      const e = yield* Effect.flip(listAllPages("listPods", s.fetchPage))
      expect(e).toBeInstanceOf(ListExpired)
      expect((e as ListExpired).restarts).toBe(MAX_LIST_RESTARTS)
      expect(s.requests.filter((r) => r === undefined)).toHaveLength(1 + MAX_LIST_RESTARTS)
    })
  )

  it.effect("a 410 on the first page is not an expired token: it fails at once, no restart", () =>
    Effect.gen(function* () {
      let calls = 0
      const e = yield* Effect.flip(
        listAllPages("listPods", () =>
          Effect.sync(() => calls++).pipe(Effect.andThen(Effect.fail(expired())))
        )
      )
      expect(e._tag).toBe("KubeError")
      expect(calls).toBe(1)
    })
  )

  it.effect("any other error on a continue page fails the list as it is", () =>
    Effect.gen(function* () {
      const s = server(["a", "b", "c"], 2, () => true)
      const fetchPage = (cont: string | undefined) =>
        cont === undefined ? s.fetchPage(cont) : Effect.fail(httpKubeError("listPods", 500, "etcd down"))
      const e = yield* Effect.flip(listAllPages("listPods", fetchPage))
      expect(e._tag).toBe("KubeError")
      expect((e as KubeError).code).toBe(500)
    })
  )

  it.effect("a list that fits one page makes one request", () =>
    Effect.gen(function* () {
      const s = server(["a"], 2, () => true)
      expect(yield* listAllPages("listPods", s.fetchPage)).toEqual(["a@1"])
      expect(s.requests).toEqual([undefined])
    })
  )
})
