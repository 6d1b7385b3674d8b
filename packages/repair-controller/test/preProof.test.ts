// Issue #25: the owner proof's cloud round trip taken off the way from toleration expiry to the taint. The cloud is
// asked shortly before the expiry; the decision uses that answer only for the very Node it was asked for (uid,
// providerID, pool and zone labels, on the decision's view and on the informer's latest copy) and only while fresh,
// and computes the owner verdict then. Everything else falls back to asking at the decision, as before.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import { defaultConfig } from "../src/config/ControllerConfig.ts"
import type { ControllerEnv } from "../src/controller/ControllerEnv.ts"
import { makeWaitingRoom } from "../src/controller/WaitingRoom.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { makeSightingStore } from "../src/controller/SightingStore.ts"
import { labelPlacement } from "../src/decide/breaker.ts"
import { makeReconciler } from "../src/controller/Reconciler.ts"
import type { ShiftObservation } from "../src/decide/zonalShiftGate.ts"
import type { InstanceFacts } from "../src/domain/Instance.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import type { KarpenterCache } from "../src/karpenter/KarpenterCache.ts"
import type { KubeShape } from "../src/kube/Kube.ts"
import type { NodeClaim } from "../src/karpenter/NodeClaims.ts"
import { proveOwner } from "../src/owner/ownership.ts"
import {
  basisOf,
  makePreProofs,
  PRE_PROOF_FRESH_MS,
  PRE_PROOF_LEAD_MS,
  type ProofBasis
} from "../src/owner/PreProofs.ts"
import { cond, node } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const POOL = "karpenter.sh/nodepool"
const ZONE = "topology.kubernetes.io/zone"

const facts = (id: string): InstanceFacts => ({
  instanceId: id,
  state: "running",
  zone: "a",
  pool: "p",
  launch: {},
  owner: { kind: "standalone" }
})

const view = (over: Partial<NodeView> = {}): NodeView => ({
  ...node("n1", [], { pool: "p", labels: { [ZONE]: "a" } }),
  uid: "u1",
  ...over
})

/**
 * A cloud whose answers take `rttMs` of (Test)Clock time, counting its calls; the informer's latest copy of n1 is
 * `live` (mutable, as heartbeats and re-creations replace it).
 */
const world = (rttMs = 200) =>
  Effect.gen(function* () {
    const asked: string[] = []
    let answer: (n: NodeView) => Effect.Effect<InstanceFacts, string> = (n) => Effect.succeed(facts(n.name))
    const state = { live: basisOf(POOL, view()) as ProofBasis | undefined }
    const proofs = yield* makePreProofs({
      poolLabel: POOL,
      inspect: (n) =>
        Effect.sync(() => asked.push(n.name)).pipe(
          Effect.andThen(Effect.sleep(rttMs)),
          Effect.andThen(Effect.suspend(() => answer(n)))
        ),
      live: () => state.live
    })
    return {
      asked,
      proofs,
      state,
      answerWith: (f: typeof answer) => {
        answer = f
      }
    }
  })

describe("PreProofs: the cloud asked ahead, used only for the same Node while fresh (TestClock)", () => {
  it.effect("asked ahead: the decision gets the answer without asking again, at the same instant", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const w = yield* world(200)
      yield* w.proofs.prepare(view())
      expect(w.asked).toEqual(["n1"])
      yield* TestClock.adjust(PRE_PROOF_LEAD_MS)
      expect(yield* w.proofs.take(view())).toEqual(facts("n1"))
      expect(w.asked).toEqual(["n1"])
      // Used once: a second decision (a retry) asks the cloud itself.
      expect(yield* w.proofs.take(view())).toBeUndefined()
      expect(w.proofs.size()).toBe(0)
    })
  )

  it.effect(
    "an answer still on its way is waited for, not asked again: the decision waits only its rest",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const w = yield* world(1000)
        yield* w.proofs.prepare(view())
        yield* TestClock.adjust(700)
        const decision = yield* Effect.forkChild(w.proofs.take(view()))
        yield* TestClock.adjust(299)
        expect(decision.pollUnsafe()).toBeUndefined()
        yield* TestClock.adjust(1)
        expect(yield* Fiber.join(decision)).toEqual(facts("n1"))
        expect(w.asked).toEqual(["n1"])
      })
  )

  it.effect("preparing again while an answer is fresh or on its way asks nothing more", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const w = yield* world(200)
      yield* w.proofs.prepare(view())
      yield* w.proofs.prepare(view())
      yield* TestClock.adjust(1000)
      yield* w.proofs.prepare(view())
      expect(w.asked).toEqual(["n1"])
      // Too old to serve an expiry PRE_PROOF_LEAD_MS away: asked again.
      yield* TestClock.adjust(PRE_PROOF_FRESH_MS)
      yield* w.proofs.prepare(view())
      expect(w.asked).toEqual(["n1", "n1"])
    })
  )

  it.effect("the onset's proof (ask) serves the expiry: one cloud call per unhealthy node", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const w = yield* world(200)
      const onset = yield* Effect.forkChild(w.proofs.ask(view()))
      yield* TestClock.adjust(200)
      expect(yield* Fiber.join(onset)).toEqual(facts("n1"))
      // A 3 s toleration: the pre-proof PRE_PROOF_LEAD_MS before its expiry finds the onset's answer fresh.
      yield* w.proofs.prepare(view())
      yield* TestClock.adjust(2800)
      expect(yield* w.proofs.take(view())).toEqual(facts("n1"))
      expect(w.asked).toEqual(["n1"])
      // Taken: the next onset asks. A toleration longer than the freshness bound: the pre-proof asks again.
      yield* w.proofs.ask(view()).pipe(Effect.forkChild)
      yield* TestClock.adjust(200)
      expect(w.asked).toEqual(["n1", "n1"])
      yield* TestClock.adjust(PRE_PROOF_FRESH_MS)
      yield* w.proofs.prepare(view())
      expect(w.asked).toEqual(["n1", "n1", "n1"])
    })
  )

  it.effect("an answer older than PRE_PROOF_FRESH_MS at the decision is not used", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const w = yield* world(200)
      yield* w.proofs.prepare(view())
      yield* TestClock.adjust(PRE_PROOF_FRESH_MS)
      expect(yield* w.proofs.take(view())).toEqual(facts("n1"))
      yield* w.proofs.prepare(view())
      yield* TestClock.adjust(PRE_PROOF_FRESH_MS + 1)
      expect(yield* w.proofs.take(view())).toBeUndefined()
    })
  )

  it.effect("anything the answer rests on changed on the decision's Node: not used", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const changed: ReadonlyArray<Partial<NodeView>> = [
        { uid: "u2" },
        { providerID: "kwok://other" },
        { labels: { [POOL]: "q", [ZONE]: "a" } },
        { labels: { [POOL]: "p", [ZONE]: "b" } }
      ]
      for (const over of changed) {
        const w = yield* world(200)
        yield* w.proofs.prepare(view())
        yield* TestClock.adjust(1000)
        expect(yield* w.proofs.take(view(over))).toBeUndefined()
      }
    })
  )

  it.effect("the informer's latest copy is another object (re-created under the same name): not used", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const w = yield* world(200)
      yield* w.proofs.prepare(view())
      // The Node was deleted and created again while the answer was on its way; the decision's view lags.
      w.state.live = basisOf(POOL, view({ uid: "u2" }))
      yield* TestClock.adjust(1000)
      expect(yield* w.proofs.take(view())).toBeUndefined()
      yield* w.proofs.prepare(view())
      w.state.live = undefined
      yield* TestClock.adjust(1000)
      expect(yield* w.proofs.take(view())).toBeUndefined()
    })
  )

  it.effect(
    "a failed answer is never used (the decision asks and reports itself); forget drops an answer",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const w = yield* world(200)
        w.answerWith(() => Effect.fail("throttled"))
        yield* w.proofs.prepare(view())
        yield* TestClock.adjust(1000)
        expect(yield* w.proofs.take(view())).toBeUndefined()
        w.answerWith((n) => Effect.succeed(facts(n.name)))
        yield* w.proofs.prepare(view())
        yield* TestClock.adjust(1000)
        w.proofs.forget("n1")
        expect(yield* w.proofs.take(view())).toBeUndefined()
      })
  )
})

const claim = (over: Partial<NodeClaim["metadata"]> = {}): NodeClaim =>
  ({
    metadata: { name: "c1", labels: { [POOL]: "p" }, ...over },
    status: { providerID: "kwok://n1", nodeName: "n1" }
  }) as NodeClaim

const karpenterWith = (c: NodeClaim | undefined) =>
  ({ present: () => true, claimOf: () => c }) as Partial<KarpenterCache> as KarpenterCache

describe("proveOwner with the answer asked ahead: the verdict is computed at the decision", () => {
  it.effect("the cloud is not asked again; the NodeClaim as it is now decides", () =>
    Effect.gen(function* () {
      let inspects = 0
      const cloud = {
        inspect: () => Effect.sync(() => void inspects++).pipe(Effect.as(facts("kwok://n1")))
      } as never
      const ahead: InstanceFacts = { ...facts("kwok://n1"), owner: { kind: "karpenter", nodeClaim: "c1" } }
      const owned = yield* proveOwner({ cloud, karpenter: karpenterWith(claim()) }, view(), ahead)
      expect(owned._tag).toBe("Owned")
      // Karpenter began deleting the claim after the answer came: the decision sees it, no repair starts.
      const acting = yield* proveOwner(
        { cloud, karpenter: karpenterWith(claim({ deletionTimestamp: new Date(T0).toISOString() })) },
        view(),
        ahead
      )
      expect(acting._tag).toBe("OwnerActing")
      expect(inspects).toBe(0)
      // Without one, asked at the decision as before.
      yield* proveOwner({ cloud, karpenter: karpenterWith(undefined) }, view())
      expect(inspects).toBe(1)
    })
  )
})

/** A reconcile env for a tolerating node: no repair starts, so only what the decision reads is real. */
const tolerating = (n: NodeView, config = defaultConfig()) =>
  Effect.gen(function* () {
    const asked: string[] = []
    const requeues: Array<readonly [string, number]> = []
    const counter = makePoolCounter(config)
    counter.upsert(n)
    const preProofs = yield* makePreProofs({
      poolLabel: config.poolLabel,
      inspect: (v) => Effect.sync(() => void asked.push(v.name)).pipe(Effect.as(facts(v.name))),
      live: () => basisOf(config.poolLabel, n)
    })
    const env = {
      config,
      cache: { view: () => n, get: () => undefined, counter, names: () => [n.name] },
      owners: { pools: { facts: () => undefined, object: () => undefined, registered: () => false } },
      shifts: yield* Ref.make<ShiftObservation>({ _tag: "Known", shifts: [] }),
      store: { get: () => ({ _tag: "None" }), originalOf: () => undefined },
      blocked: { unblock: () => {} },
      queue: { addAfter: (k: string, ms: number) => void requeues.push([k, ms]), add: () => {} },
      preProofs,
      // Placement proofs are Placements.ts's (placements.test.ts): here every node is where its labels say.
      placements: {
        of: (v: NodeView) => labelPlacement(config, v),
        ensure: () => Effect.void,
        forget: () => {}
      },
      // The fleet inventory is inventory.test.ts's: here it only takes the calls.
      inventory: { ensure: () => {}, forget: () => {}, pending: () => 0 },
      waiting: makeWaitingRoom(60_000),
      relapse: { ledger: () => undefined, ledgers: () => [], sighted: () => Effect.succeed([]) },
      reboots: { of: () => [] },
      scheduled: { of: () => [] },
      requests: { of: () => [] },
      plannedRepairs: { acted: () => false, setPlan: () => undefined },
      // First sights in memory only (nothing is flushed here): the journal is sightingStore.test.ts's.
      sightings: makeSightingStore({} as KubeShape, config, () => Effect.void)
    } as unknown as ControllerEnv
    return { env, asked, requeues, preProofs }
  })

describe("Reconciler: the cloud is asked PRE_PROOF_LEAD_MS before the expiry (TestClock)", () => {
  // XID 79: Replace after 10 minutes (the catalog's default policy).
  const failing = (since: number, annotations: Record<string, string> = {}) => ({
    ...node("n1", [cond("AcceleratedHardwareReady", "False", since, "NvidiaXID79Error")], {
      pool: "p",
      annotations
    }),
    uid: "u1"
  })

  it.effect("woken early, asks once, then requeued for the expiry itself", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const t = yield* tolerating(failing(T0))
      yield* makeReconciler(t.env)("n1")
      const toleranceMs = t.requeues[0]![1] + PRE_PROOF_LEAD_MS
      expect(toleranceMs).toBeGreaterThan(PRE_PROOF_LEAD_MS)
      expect(t.asked).toEqual([])
      yield* TestClock.adjust(toleranceMs - PRE_PROOF_LEAD_MS)
      yield* makeReconciler(t.env)("n1")
      expect(t.asked).toEqual(["n1"])
      expect(t.requeues).toEqual([
        ["n1", toleranceMs - PRE_PROOF_LEAD_MS],
        ["n1", PRE_PROOF_LEAD_MS]
      ])
      expect(t.preProofs.size()).toBe(1)
    })
  )

  it.effect("nothing asked for a node that cannot be repaired (vetoed, or dry-run)", () =>
    Effect.gen(function* () {
      const since = T0 - 600_000 + 1000
      yield* TestClock.setTime(T0)
      const vetoed = yield* tolerating(failing(since, { "nodemend.io/do-not-repair": "true" }))
      yield* makeReconciler(vetoed.env)("n1")
      const dry = yield* tolerating(failing(since), { ...defaultConfig(), dryRun: true })
      yield* makeReconciler(dry.env)("n1")
      expect([...vetoed.asked, ...dry.asked]).toEqual([])
    })
  )

  it.effect("a node that recovers drops its answer", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const t = yield* tolerating(failing(T0 - 600_000 + 1000))
      // Seen when it failed (the toleration runs from the controller's first sight, SightingStore.ts).
      t.env.sightings.see(failing(T0 - 600_000 + 1000), T0 - 600_000 + 1000)
      yield* makeReconciler(t.env)("n1")
      expect(t.preProofs.size()).toBe(1)
      const healthy = yield* tolerating({ ...failing(T0), conditions: [] })
      yield* makeReconciler({ ...t.env, cache: healthy.env.cache })("n1")
      expect(t.preProofs.size()).toBe(0)
    })
  )
})
