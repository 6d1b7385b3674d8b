// The first sights' journal (controller/SightingStore.ts) against an in-memory ConfigMap store, as the relapse
// ledgers' (relapseStore.test.ts): kept across a restart, batched (a storm of failures is one write), bounded (only
// unhealthy statuses; cleared and gone nodes leave), and unreadable contents fail closed (seen at the load).
import { describe, expect, it } from "@effect/vitest"
import { type ConfigMap, KubeError } from "@nodemend/kube-access"
import { Effect, Fiber, Result } from "effect"
import { TestClock } from "effect/testing"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { FLUSH_MS, makeSightingStore } from "../src/controller/SightingStore.ts"
import { matchPolicies } from "../src/decide/policyMatch.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import { parseSightings, SIGHTINGS_CONFIGMAP } from "../src/domain/Sightings.ts"
import type { KubeShape } from "../src/kube/Kube.ts"
import { cond, MIN, node } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const EPOCH_DAY_2 = Date.parse("1970-01-02T00:00:00Z")
const config = Result.getOrThrow(
  decodeConfig({
    namespace: "ns",
    policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 600 }]
  })
)

const fakeKube = () => {
  const cms = new Map<string, ConfigMap>()
  let writes = 0
  const kube = {
    readConfigMap: (_ns: string, name: string) =>
      cms.has(name)
        ? Effect.succeed(cms.get(name)!)
        : Effect.fail(
            new KubeError({ operation: "read", code: 404, reason: "NotFound", message: "not found" })
          ),
    upsertConfigMap: (body: ConfigMap) =>
      Effect.sync(() => {
        writes++
        cms.set(body.metadata?.name ?? "", body)
      })
  } as unknown as KubeShape
  return { kube, cms, writes: () => writes }
}

const logs: Array<string> = []
const log = (msg: string) => Effect.sync(() => void logs.push(msg))

const failing = (name: string, since: number, uid = `uid-${name}`): NodeView => ({
  ...node(name, [cond("KernelReady", "False", since, "ForkFailedOutOfPIDs")]),
  uid,
  createdAt: T0 - 60 * MIN
})
const expiry = (n: NodeView) => matchPolicies(config, n)[0]?.expiresAt
const journal = (cms: Map<string, ConfigMap>) =>
  Result.getOrThrow(parseSightings(cms.get(SIGHTINGS_CONFIGMAP)?.data?.sightings ?? ""))

describe("SightingStore", () => {
  it.effect(
    "a restart keeps the first sight: the toleration is not started over, nor taken from a 1970 time",
    () =>
      Effect.gen(function* () {
        const { kube, cms } = fakeKube()
        const before = makeSightingStore(kube, config, log)
        const n = failing("n1", EPOCH_DAY_2)
        expect(expiry(before.see(n, T0))).toBe(T0 + 600_000)
        yield* before.flush
        expect(journal(cms).map((s) => [s.node, s.seen])).toEqual([["n1", T0]])
        // The controller restarts 5 minutes later: a new store, loaded before any decision.
        const after = makeSightingStore(kube, config, log)
        yield* after.load(T0 + 5 * MIN, (name) => (name === "n1" ? "uid-n1" : undefined))
        expect(expiry(after.see(n, T0 + 5 * MIN))).toBe(T0 + 600_000)
        // Without the journal (a restart that lost it), the toleration would start at the restart: later, never sooner.
        const lost = makeSightingStore(fakeKube().kube, config, log)
        yield* lost.load(T0 + 5 * MIN, () => "uid-n1")
        expect(expiry(lost.see(n, T0 + 5 * MIN))).toBe(T0 + 5 * MIN + 600_000)
      })
  )

  it.effect("a storm of 1,000 failures is one write, made by the writer within FLUSH_MS", () =>
    Effect.gen(function* () {
      const { kube, cms, writes } = fakeKube()
      const store = makeSightingStore(kube, config, log)
      const writer = yield* Effect.forkChild(store.writer)
      for (let i = 0; i < 1000; i++) store.see(failing(`n${i}`, T0), T0)
      expect(writes()).toBe(0)
      yield* TestClock.adjust(FLUSH_MS)
      expect(writes()).toBe(1)
      expect(journal(cms)).toHaveLength(1000)
      // Nothing new: nothing written.
      store.see(failing("n1", T0), T0 + 2000)
      yield* TestClock.adjust(5 * FLUSH_MS)
      expect(writes()).toBe(1)
      yield* Fiber.interrupt(writer)
    })
  )

  it.effect(
    "bounded: a cleared condition and a gone node leave the journal; a new transition is seen afresh",
    () =>
      Effect.gen(function* () {
        const { kube, cms } = fakeKube()
        const store = makeSightingStore(kube, config, log)
        store.see(failing("a", T0), T0)
        store.see(failing("b", T0), T0)
        store.see(failing("c", T0), T0)
        // a recovers, b is deleted, c flaps (a new lastTransitionTime, unseen in between).
        store.see({ ...failing("a", T0), conditions: [cond("KernelReady", "True", T0 + MIN)] }, T0 + MIN)
        store.forget("b")
        const c2 = failing("c", T0 + 2 * MIN)
        expect(expiry(store.see(c2, T0 + 3 * MIN))).toBe(T0 + 3 * MIN + 600_000)
        yield* store.flush
        expect(journal(cms).map((s) => [s.node, s.transition, s.seen])).toEqual([
          ["c", T0 + 2 * MIN, T0 + 3 * MIN]
        ])
      })
  )

  it.effect(
    "on load: another Node under the name is not this one; a sight after the load counts as the load",
    () =>
      Effect.gen(function* () {
        const { kube, cms } = fakeKube()
        const first = makeSightingStore(kube, config, log)
        first.see(failing("replaced", T0), T0)
        first.see(failing("skewed", T0), T0 + 60 * MIN)
        yield* first.flush
        const store = makeSightingStore(kube, config, log)
        yield* store.load(T0 + 10 * MIN, (name) => (name === "replaced" ? "new-uid" : `uid-${name}`))
        expect(expiry(store.see(failing("replaced", T0, "new-uid"), T0 + 10 * MIN))).toBe(
          T0 + 10 * MIN + 600_000
        )
        expect(expiry(store.see(failing("skewed", T0), T0 + 10 * MIN))).toBe(T0 + 10 * MIN + 600_000)
        expect(cms.size).toBe(1)
      })
  )

  it.effect(
    "unreadable contents: a clear error, and every status is first seen at the load (fail closed)",
    () =>
      Effect.gen(function* () {
        const { kube, cms } = fakeKube()
        cms.set(SIGHTINGS_CONFIGMAP, {
          metadata: { name: SIGHTINGS_CONFIGMAP },
          data: { sightings: "{not json" }
        })
        logs.length = 0
        const store = makeSightingStore(kube, config, log)
        yield* store.load(T0 + 10 * MIN, () => "uid-n1")
        expect(logs).toEqual(["unreadable sightings journal; every unhealthy status is first seen now"])
        expect(expiry(store.see(failing("n1", EPOCH_DAY_2), T0 + 10 * MIN))).toBe(T0 + 10 * MIN + 600_000)
        // The bad contents are replaced at the next write.
        yield* store.flush
        expect(journal(cms).map((s) => s.node)).toEqual(["n1"])
      })
  )
})
