// Issue #25: the way from toleration expiry to the taint. Identity is proven (inspect) and the record journaled
// before the taint, so each request left on that way is a round trip every node of a wave waits for. The taint
// goes from the informer's copy of the Node (no read first) with the same uid/resourceVersion guards; a stale copy
// fails the guard and the Node is read afresh. A journal entry the store already holds is patched in one request.
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { httpKubeError, type Node, type Taint } from "@nodemend/kube-access"
import { REPAIR_TAINT_KEY } from "@nodemend/reason-codes"
import { makeTaintFirst } from "../src/actions/TaintFirst.ts"
import { type TaintPorts, taint } from "../src/actions/taint.ts"
import { makeRepairStore } from "../src/controller/RepairStore.ts"
import type { KubeShape } from "../src/kube/Kube.ts"
import { startedKwokRepair } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")

const record = startedKwokRepair(T0)

/** One Node on a fake API server that applies the taint patch's guards as the real one does (test ops: 422). */
const apiServer = (initial: { uid: string; rv: number; taints?: Taint[] }) => {
  const calls: string[] = []
  let node: Node = {
    metadata: { name: "n1", uid: initial.uid, resourceVersion: String(initial.rv) },
    spec: initial.taints !== undefined ? { taints: initial.taints } : {}
  }
  const kube = {
    readNode: () =>
      Effect.sync(() => {
        calls.push("read")
        return structuredClone(node)
      }),
    jsonPatchNode: (_name: string, ops: ReadonlyArray<object>) =>
      Effect.suspend(() => {
        calls.push("patch")
        for (const op of ops as ReadonlyArray<{ op: string; path: string; value?: unknown }>) {
          if (op.op !== "test") continue
          const actual = op.path === "/metadata/uid" ? node.metadata?.uid : node.metadata?.resourceVersion
          if (actual !== op.value) return Effect.fail(httpKubeError("patchNode", 422, "{}"))
        }
        const added = (ops as ReadonlyArray<{ op: string; path: string; value?: unknown }>).find(
          (o) => o.op === "add"
        )
        const taints = [
          ...(node.spec?.taints ?? []),
          ...(added?.path === "/spec/taints" ? (added.value as Taint[]) : added ? [added.value as Taint] : [])
        ]
        node = {
          ...node,
          metadata: { ...node.metadata, resourceVersion: String(Number(node.metadata?.resourceVersion) + 1) },
          spec: { ...node.spec, taints }
        }
        return Effect.succeed(structuredClone(node))
      })
  } as unknown as KubeShape
  return { kube, calls, node: () => node }
}

const envWith = (kube: KubeShape, cached: Node | undefined): TaintPorts =>
  ({
    kube,
    cache: { get: () => cached, names: () => (cached ? ["n1"] : []) },
    taintFirst: makeTaintFirst(),
    events: { emit: () => Effect.void, emitNow: () => Effect.void, emitDeduped: () => Effect.void }
  }) as unknown as TaintPorts

const cachedNode = (uid: string, rv: number, taints?: Taint[]): Node => ({
  metadata: { name: "n1", uid, resourceVersion: String(rv) },
  spec: taints !== undefined ? { taints } : {}
})

const hasRepairTaint = (n: Node) => (n.spec?.taints ?? []).some((t) => t.key === REPAIR_TAINT_KEY)

describe("expiry -> taint: no fixed wait, no read before the write (TestClock)", () => {
  it.effect("the informer's copy is current: one request (the guarded patch), at the same instant", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const server = apiServer({ uid: "u1", rv: 7 })
      const outcome = yield* taint(envWith(server.kube, cachedNode("u1", 7)), record)
      expect(outcome).toEqual({ _tag: "Fact", fact: { _tag: "Tainted" } })
      expect(server.calls).toEqual(["patch"])
      expect(hasRepairTaint(server.node())).toBe(true)
      // Nothing slept: the TestClock never moved (a fixed wait would have hung this test).
      expect(yield* Clock.currentTimeMillis).toBe(T0)
    })
  )

  it.effect("a stale copy fails the resourceVersion guard, then the Node is read and patched as before", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const server = apiServer({ uid: "u1", rv: 9, taints: [{ key: "other", effect: "NoSchedule" }] })
      const outcome = yield* taint(envWith(server.kube, cachedNode("u1", 7)), record)
      expect(outcome._tag).toBe("Fact")
      expect(server.calls).toEqual(["patch", "read", "patch"])
      expect(server.node().spec?.taints?.map((t) => t.key)).toEqual(["other", REPAIR_TAINT_KEY])
      expect(yield* Clock.currentTimeMillis).toBe(T0)
    })
  )

  it.effect("a copy that says the taint is there already is not trusted: the Node is read", () =>
    Effect.gen(function* () {
      const server = apiServer({ uid: "u1", rv: 9 })
      const stale = cachedNode("u1", 7, [{ key: REPAIR_TAINT_KEY, value: "true", effect: "NoSchedule" }])
      yield* taint(envWith(server.kube, stale), record)
      expect(server.calls).toEqual(["read", "patch"])
      expect(hasRepairTaint(server.node())).toBe(true)
    })
  )

  it.effect("a copy of another Node object (another uid) is not used; the patch never lands on it", () =>
    Effect.gen(function* () {
      const server = apiServer({ uid: "u2", rv: 3 })
      const outcome = yield* taint(envWith(server.kube, cachedNode("u2", 3)), record)
      // Read afresh, then the uid guard refuses the patch: a conflict, tried again later, nothing tainted.
      expect(server.calls).toEqual(["read", "patch"])
      expect(outcome).toEqual({ _tag: "Wait", requeueAfterMs: 0 })
      expect(hasRepairTaint(server.node())).toBe(false)
    })
  )
})

describe("journal writes", () => {
  it.effect(
    "a new record is created; a record the store holds is patched first (one request, not 409 + patch)",
    () =>
      Effect.gen(function* () {
        const writes: Array<boolean | undefined> = []
        const kube = {
          upsertConfigMap: (_body: unknown, exists?: boolean) =>
            Effect.sync(() => {
              writes.push(exists)
            }),
          deleteConfigMap: () => Effect.void,
          listConfigMaps: () => Effect.succeed([])
        } as unknown as KubeShape
        const store = makeRepairStore(kube, "ns", () => {})
        yield* store.persist(record)
        yield* store.persist({ ...record, phase: "Replacing" })
        yield* store.finish(record)
        yield* store.persist(record)
        expect(writes).toEqual([false, true, false])
      })
  )
})
