// The relapse ledgers' journal (controller/RelapseStore.ts) against an in-memory ConfigMap store: a repair that
// ends joins its ledger, a relapse engages the hold and is written first, a restart reads it back, an operator's
// release (the ConfigMap deleted) and a quiet period lift it. And the waiting room's staleness (WaitingRoom.ts).
import { describe, expect, it } from "@effect/vitest"
import { type ConfigMap, KubeError } from "@nodemend/kube-access"
import { Effect, Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { makeRelapseStore } from "../src/controller/RelapseStore.ts"
import { makeWaitingRoom } from "../src/controller/WaitingRoom.ts"
import { matchPolicies } from "../src/decide/policyMatch.ts"
import type { RepairRecord } from "../src/domain/RepairRecord.ts"
import type { KubeShape } from "../src/kube/Kube.ts"
import { cond, MIN, node } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const REASON = "ForkFailedOutOfPIDs"
const config = Result.getOrThrow(
  decodeConfig({
    namespace: "ns",
    policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 60 }],
    relapse: { threshold: 2, windowSeconds: 600, quietSeconds: 3600 }
  })
)

const fakeKube = () => {
  const cms = new Map<string, ConfigMap>()
  const notFound = (op: string) =>
    new KubeError({ operation: op, code: 404, reason: "NotFound", message: "not found" })
  const kube = {
    readConfigMap: (_ns: string, name: string) =>
      cms.has(name) ? Effect.succeed(cms.get(name)!) : Effect.fail(notFound("read")),
    listConfigMaps: () => Effect.succeed([...cms.values()]),
    upsertConfigMap: (body: ConfigMap) =>
      Effect.sync(() => {
        cms.set(body.metadata?.name ?? "", body)
      }),
    deleteConfigMap: (_ns: string, name: string) => Effect.sync(() => void cms.delete(name))
  } as unknown as KubeShape
  return { kube, cms }
}

const record = (i: number, replacement: string): RepairRecord =>
  ({
    v: 3,
    id: `r${i}`,
    phase: "Succeeded",
    action: "Replace",
    conditionType: "KernelReady",
    conditionStatus: "False",
    reason: REASON,
    startedAt: new Date(T0 + i * MIN).toISOString(),
    finishedAt: new Date(T0 + i * MIN + 30_000).toISOString(),
    replacement: { nodeName: replacement },
    node: { name: `n${i}`, pool: "p" }
  }) as unknown as RepairRecord

const failing = (name: string, since: number) => {
  const n = {
    ...node(name, [cond("KernelReady", "False", since, REASON)], { pool: "p" }),
    createdAt: since - 5000
  }
  return { n, matches: matchPolicies(config, n) }
}

describe("RelapseStore", () => {
  it.effect("repairs join the ledger; the threshold-th relapse holds; a restart reads the hold back", () =>
    Effect.gen(function* () {
      const { kube, cms } = fakeKube()
      const store = makeRelapseStore(kube, config, () => Effect.void)
      yield* store.repaired(record(0, "n0-r"), T0 + MIN)
      yield* store.repaired(record(1, "n1-r"), T0 + 2 * MIN)
      expect(cms.size).toBe(1)
      const a = failing("n0-r", T0 + 2 * MIN)
      const first = yield* store.sighted(a.n, "p", a.matches, T0 + 2 * MIN)
      expect(first.map((s) => [s.relapse.kind, s.engaged !== undefined])).toEqual([["replacement", false]])
      const b = failing("n1-r", T0 + 3 * MIN)
      const second = yield* store.sighted(b.n, "p", b.matches, T0 + 3 * MIN)
      expect(second[0]?.engaged?.evidence.map((r) => r.node)).toEqual(["n0-r", "n1-r"])
      // Seen again: no second relapse.
      expect(yield* store.sighted(b.n, "p", b.matches, T0 + 4 * MIN)).toEqual([])

      const restarted = makeRelapseStore(kube, config, () => Effect.void)
      yield* restarted.load
      expect(restarted.ledger("p", REASON)?.hold?.evidence).toHaveLength(2)
      expect(yield* restarted.recheck(T0 + 10 * MIN)).toEqual([])
    })
  )

  it.effect(
    "an operator's release (ledger deleted) and a quiet period lift the hold; the ledger starts over",
    () =>
      Effect.gen(function* () {
        const { kube, cms } = fakeKube()
        const store = makeRelapseStore(kube, config, () => Effect.void)
        const hold = function* () {
          yield* store.repaired(record(0, "n0-r"), T0 + MIN)
          yield* store.repaired(record(1, "n1-r"), T0 + 2 * MIN)
          for (const [n, t] of [
            ["n0-r", T0 + 2 * MIN],
            ["n1-r", T0 + 3 * MIN]
          ] as const) {
            const f = failing(n, t)
            yield* store.sighted(f.n, "p", f.matches, t)
          }
          expect(store.ledger("p", REASON)?.hold).toBeDefined()
        }
        yield* hold()
        cms.clear()
        expect(yield* store.recheck(T0 + 5 * MIN)).toEqual([{ pool: "p", reason: REASON, by: "operator" }])
        expect(store.ledger("p", REASON)).toBeUndefined()

        yield* hold()
        // Not yet quiet: the last relapse was at T0+3m, quiet 1 h.
        expect(yield* store.recheck(T0 + 62 * MIN)).toEqual([])
        expect(yield* store.recheck(T0 + 63 * MIN)).toEqual([{ pool: "p", reason: REASON, by: "quiet" }])
        expect(cms.size).toBe(0)
      })
  )

  it.effect(
    "a Node re-created under its name relapses once, across a restart; an old-format ledger loads",
    () =>
      Effect.gen(function* () {
        const { kube, cms } = fakeKube()
        const store = makeRelapseStore(kube, config, () => Effect.void)
        yield* store.repaired(record(0, "n0-r"), T0 + MIN)
        yield* store.repaired(record(1, "n1-r"), T0 + 2 * MIN)
        // One Node object per uid: its kubelet deletes and re-creates it (a new uid and creationTimestamp).
        const incarnation = (uid: string, since: number) => {
          const f = failing("n0-r", since)
          return { ...f, n: { ...f.n, uid } }
        }
        const a = incarnation("n0-r-1", T0 + 2 * MIN)
        expect(yield* store.sighted(a.n, "p", a.matches, T0 + 2 * MIN)).toHaveLength(1)
        // Threshold 2: a second count of the same node would hold the pool.
        const b = incarnation("n0-r-2", T0 + 3 * MIN)
        expect(yield* store.sighted(b.n, "p", b.matches, T0 + 3 * MIN)).toEqual([])
        expect(store.ledger("p", REASON)?.hold).toBeUndefined()

        // The journal as the old controller wrote it: the re-created Node counted a second time, under its new uid.
        const [name, cm] = [...cms.entries()][0]!
        const stored = JSON.parse(cm.data?.ledger ?? "")
        stored.relapses = [...stored.relapses, { ...stored.relapses[0], uid: "n0-r-2", at: T0 + 3 * MIN }]
        cms.set(name, { ...cm, data: { ledger: JSON.stringify(stored) } })
        const restarted = makeRelapseStore(kube, config, () => Effect.void)
        yield* restarted.load
        expect(restarted.ledger("p", REASON)?.relapses.map((r) => r.node)).toEqual(["n0-r"])
        expect(yield* restarted.sighted(b.n, "p", b.matches, T0 + 4 * MIN)).toEqual([])
        const c = failing("n1-r", T0 + 4 * MIN)
        const held = yield* restarted.sighted(c.n, "p", c.matches, T0 + 4 * MIN)
        expect(held[0]?.engaged?.evidence.map((r) => r.node)).toEqual(["n0-r", "n1-r"])
      })
  )

  it.effect(
    "a repair recorded after an operator deleted a ledger starts a fresh one (no hold carried over)",
    () =>
      Effect.gen(function* () {
        const { kube, cms } = fakeKube()
        const store = makeRelapseStore(kube, config, () => Effect.void)
        yield* store.repaired(record(0, "n0-r"), T0 + MIN)
        cms.clear()
        yield* store.repaired(record(1, "n1-r"), T0 + 2 * MIN)
        expect(store.ledger("p", REASON)?.repairs.map((r) => r.id)).toEqual(["r1"])
      })
  )
})

describe("WaitingRoom", () => {
  it("entries count per scope until removed or stale", () => {
    const room = makeWaitingRoom(60_000)
    const w = (n: string) => ({ node: n, reason: REASON, rank: "fatal" as const, dueSince: T0, setbacks: 0 })
    room.put("p", w("a"), T0)
    room.put("p", w("b"), T0 + 30_000)
    room.put("q", w("c"), T0)
    expect(room.of("p", T0 + 30_000).map((x) => x.node)).toEqual(["a", "b"])
    expect(room.of("p", T0 + 61_000).map((x) => x.node)).toEqual(["b"])
    room.remove("b")
    expect(room.of("p", T0 + 31_000).map((x) => x.node)).toEqual(["a"])
    room.put("q", w("a"), T0 + 40_000)
    expect(room.of("p", T0 + 41_000)).toEqual([])
    expect(room.of("q", T0 + 41_000).map((x) => x.node)).toEqual(["c", "a"])
  })
})
