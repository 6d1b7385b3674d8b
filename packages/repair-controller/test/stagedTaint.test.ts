// Issue #25: in a wave of expiries, a worker is held for the journal create, the taint patch and the journal write
// of the taint's outcome. The third is not needed before the repair's next action (which waits for the wave
// anyway, TaintFirst), and replaying a taint after a crash changes nothing: so in a wave it is journaled right
// before that next action, and the worker goes to the next node one round trip sooner. A lone repair journals it
// at once, as before.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Ref, Result } from "effect"
import { TestClock } from "effect/testing"
import type { Node } from "@nodemend/kube-access"
import { makeTaintFirst } from "../src/actions/TaintFirst.ts"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerEnv } from "../src/controller/ControllerEnv.ts"
import { makeRepairStore } from "../src/controller/RepairStore.ts"
import { runRepair } from "../src/controller/runRepair.ts"
import { parseRecord, type RepairRecord } from "../src/domain/RepairRecord.ts"
import type { KubeShape } from "../src/kube/Kube.ts"
import { wait } from "../src/repair/outcome.ts"
import { startedKwokRepair } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const config = Result.getOrThrow(decodeConfig({}))

const started = startedKwokRepair(T0)

/** The API server and the owner as one ordered log of what was asked, and the journal as last written. */
const world = Effect.gen(function* () {
  const calls: string[] = []
  let journaled: RepairRecord | undefined
  let node: Node = { metadata: { name: "n1", uid: "u1", resourceVersion: "1" }, spec: {} }
  const kube = {
    readNode: () =>
      Effect.sync(() => {
        calls.push("read Node")
        return structuredClone(node)
      }),
    jsonPatchNode: () =>
      Effect.sync(() => {
        calls.push("taint")
        node = {
          ...node,
          spec: { taints: [{ key: "nodemend.io/repair", value: "true", effect: "NoSchedule" }] }
        }
        return node
      }),
    upsertConfigMap: (cm: { data: { record: string } }) =>
      Effect.sync(() => {
        calls.push("journal")
        journaled = Result.getOrThrow(parseRecord(cm.data.record))
      }),
    listConfigMaps: () => Effect.succeed([])
  } as unknown as KubeShape
  const store = makeRepairStore(kube, "ns", () => {})
  const taintFirst = makeTaintFirst()
  const requeued: number[] = []
  const env = {
    config,
    kube,
    store,
    taintFirst,
    cache: { get: () => undefined, view: () => undefined, counter: { unhealthyNames: () => [] } },
    events: { emit: () => Effect.void, emitNow: () => Effect.void, emitDeduped: () => Effect.void },
    queue: { add: () => {}, addAfter: (_: string, ms: number) => requeued.push(ms), length: () => 0 },
    drains: { holds: () => false, leave: () => {}, enter: () => Effect.succeed(false) },
    shifts: yield* Ref.make({ _tag: "Known", shifts: [] }),
    owners: {
      of: () => ({
        addCapacity: () =>
          Effect.sync(() => {
            calls.push("launch")
            return wait(1000)
          }),
        release: () => Effect.void
      })
    },
    flushPoolMetrics: () => {}
  } as unknown as ControllerEnv
  return { env, store, taintFirst, calls, requeued, journal: () => journaled }
})

describe("the taint's outcome in a wave (TestClock)", () => {
  it.effect("is journaled before the repair's next action, not between the taint and the next node", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const w = yield* world
      yield* w.store.persist(started)
      // Another node's start is being written: a wave.
      const other = yield* Deferred.make<void>()
      yield* Effect.forkChild(w.taintFirst.starting(Deferred.await(other)))
      yield* Effect.yieldNow

      yield* runRepair(w.env, started)
      expect(w.calls).toEqual(["journal", "read Node", "taint"])
      // In memory the repair has moved on; the journal still says Tainting, so a crash now re-taints (a no-op).
      const held = w.store.get("n1")
      expect(held._tag === "Record" && held.record.phase).toBe("Replacing")
      expect(w.journal()?.phase).toBe("Tainting")
      expect(w.requeued.length).toBe(1)

      // The wave is written; after its quiet period the next action goes, journaled first.
      yield* Deferred.succeed(other, undefined)
      yield* TestClock.adjust(2000)
      yield* runRepair(w.env, held._tag === "Record" ? held.record : started)
      expect(w.calls).toEqual(["journal", "read Node", "taint", "journal", "launch"])
      expect(w.journal()?.phase).toBe("Replacing")
    })
  )

  it.effect("a lone repair journals it at once, as every other step", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const w = yield* world
      yield* w.store.persist(started)
      yield* runRepair(w.env, started)
      expect(w.calls).toEqual(["journal", "read Node", "taint", "journal", "launch"])
      expect(w.journal()?.phase).toBe("Replacing")
    })
  )
})
