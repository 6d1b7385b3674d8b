import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import {
  holdLeadership,
  type LeaseAttempt,
  leaseStep,
  makeLeaseLock
} from "../src/controller/LeaderElection.ts"
import type { KubeShape } from "../src/kube/Kube.ts"
import { httpKubeError } from "@nodemend/kube-access"
import type { Lease } from "@nodemend/kube-access"

const LEADING: LeaseAttempt = { _tag: "Leading" }
const CONTENDED: LeaseAttempt = { _tag: "Contended" }

const lease = {
  namespace: "ns",
  name: "lease",
  identity: "me",
  leaseDurationSeconds: 15,
  renewIntervalSeconds: 2
}

/** Moves the TestClock one second at a time, so the fibers under test run at every tick. */
const tickSeconds = (seconds: number) =>
  Effect.gen(function* () {
    for (let s = 0; s < seconds; s++) yield* TestClock.adjust("1 second")
  })

/** Holds leadership (in a child fiber) with a lock whose every acquire-or-renew is `attempt`. */
const holdWith = (attempt: Effect.Effect<LeaseAttempt>) =>
  Effect.forkChild(holdLeadership({ tryAcquireOrRenew: attempt }, lease))

describe("holdLeadership (TestClock)", () => {
  it.effect("a renewal that never answers ends leadership within the lease duration", () =>
    Effect.gen(function* () {
      // The API server stops answering (a request may hang for the 30 s HTTP timeout, longer than the lease).
      const hold = yield* holdWith(Effect.never)
      // Another replica may take the lease 15 s after our last renewal: we must have stopped by then.
      yield* tickSeconds(lease.leaseDurationSeconds)
      expect(hold.pollUnsafe()).toBeDefined()
      yield* Fiber.join(hold)
    })
  )

  it.effect("renewals that succeed keep leadership", () =>
    Effect.gen(function* () {
      const hold = yield* holdWith(Effect.succeed(LEADING))
      yield* tickSeconds(60)
      expect(hold.pollUnsafe()).toBeUndefined()
      yield* Fiber.interrupt(hold)
    })
  )

  it.effect("renewals that fail end leadership after the renew deadline, not before", () =>
    Effect.gen(function* () {
      const hold = yield* holdWith(Effect.succeed(CONTENDED))
      yield* tickSeconds(10)
      expect(hold.pollUnsafe()).toBeUndefined()
      yield* tickSeconds(5)
      expect(hold.pollUnsafe()).toBeDefined()
    })
  )
})

/**
 * One Lease with the API server's write rules: create fails 409 if it exists, replace fails 409 unless the body
 * carries the current resourceVersion. (The same behaviour against the real API server, with two electors and
 * a Lease overwritten by hand, is in test/integration/apiFaults.test.ts.) `beforeReplace` runs just before a
 * replace is judged: another writer getting in first.
 */
const leaseStore = () => {
  let stored: Lease | undefined
  let rv = 0
  const hooks = { beforeReplace: () => {} }
  const conflict = (op: string) => httpKubeError(op, 409, JSON.stringify({ reason: "Conflict" }))
  const put = (body: Lease) => {
    stored = { ...body, metadata: { ...body.metadata, resourceVersion: String(++rv) } }
    return structuredClone(stored)
  }
  const kube = {
    readLease: () =>
      Effect.suspend(() =>
        stored === undefined
          ? Effect.fail(httpKubeError("readLease", 404, "{}"))
          : Effect.succeed(structuredClone(stored))
      ),
    createLease: (_ns: string, body: Lease) =>
      Effect.suspend(() =>
        stored !== undefined ? Effect.fail(conflict("createLease")) : Effect.succeed(put(body))
      ),
    replaceLease: (_ns: string, _name: string, body: Lease) =>
      Effect.suspend(() => {
        hooks.beforeReplace()
        return body.metadata?.resourceVersion !== stored?.metadata?.resourceVersion
          ? Effect.fail(conflict("replaceLease"))
          : Effect.succeed(put(body))
      })
  } as unknown as KubeShape
  /** Another replica writes itself in (by hand, as `kubectl edit` would). */
  const overwriteHolder = (holder: string) => {
    if (stored?.spec === undefined) throw new Error("no lease")
    put({
      ...stored,
      spec: { ...stored.spec, holderIdentity: holder, renewTime: "2026-11-30T00:00:00.000000Z" }
    })
  }
  return { kube, hooks, overwriteHolder, holder: () => stored?.spec?.holderIdentity }
}

describe("leaseStep", () => {
  it("absent -> create; ours -> renew; nobody -> take over; another, fresh -> held; another, expired -> take over", () => {
    expect(leaseStep(undefined, "me", 0, 0, 15)._tag).toBe("Create")
    expect(leaseStep({ holderIdentity: "me" }, "me", 0, 99_000, 15)._tag).toBe("Renew")
    expect(leaseStep({ holderIdentity: "" }, "me", 0, 0, 15)._tag).toBe("TakeOver")
    expect(leaseStep({ holderIdentity: "other", leaseDurationSeconds: 15 }, "me", 1000, 15_999, 15)).toEqual({
      _tag: "HeldByOther",
      holder: "other"
    })
    expect(
      leaseStep({ holderIdentity: "other", leaseDurationSeconds: 15 }, "me", 1000, 16_000, 15)._tag
    ).toBe("TakeOver")
  })
})

/**
 * A lock that holds the lease, and whose next renewal loses its write (409): `writer` overwrites the lease just
 * before that one replace is judged.
 */
const leaderLosingNextRenewalTo = (writer: string) =>
  Effect.gen(function* () {
    const store = leaseStore()
    const lock = makeLeaseLock(store.kube, lease)
    expect(yield* lock.tryAcquireOrRenew).toEqual(LEADING)
    let once = true
    store.hooks.beforeReplace = () => {
      if (once) store.overwriteHolder(writer)
      once = false
    }
    return lock
  })

describe("makeLeaseLock", () => {
  it.effect("a leader whose lease was overwritten by another holder reads HeldByOther", () =>
    Effect.gen(function* () {
      const store = leaseStore()
      const lock = makeLeaseLock(store.kube, lease)
      expect(yield* lock.tryAcquireOrRenew).toEqual(LEADING)
      expect(yield* lock.tryAcquireOrRenew).toEqual(LEADING)
      store.overwriteHolder("other")
      expect(yield* lock.tryAcquireOrRenew).toEqual({ _tag: "HeldByOther", holder: "other" })
      expect(store.holder()).toBe("other")
    })
  )

  it.effect("a renewal that loses its write (409) to another holder reads HeldByOther at once", () =>
    Effect.gen(function* () {
      const lock = yield* leaderLosingNextRenewalTo("other")
      expect(yield* lock.tryAcquireOrRenew).toEqual({ _tag: "HeldByOther", holder: "other" })
    })
  )

  it.effect("a lost write (409) whose re-read still names us is only Contended", () =>
    Effect.gen(function* () {
      // e.g. our own earlier renewal that timed out on our side but reached the server
      const lock = yield* leaderLosingNextRenewalTo(lease.identity)
      expect(yield* lock.tryAcquireOrRenew).toEqual(CONTENDED)
      expect(yield* lock.tryAcquireOrRenew).toEqual(LEADING)
    })
  )
})

describe("holdLeadership steps down at once (TestClock)", () => {
  it.effect(
    "a renewal that reads another holder ends leadership at that renewal, not at the renew deadline",
    () =>
      Effect.gen(function* () {
        const store = leaseStore()
        const lock = makeLeaseLock(store.kube, lease)
        expect(yield* lock.tryAcquireOrRenew).toEqual(LEADING)
        const hold = yield* Effect.forkChild(holdLeadership(lock, lease))
        yield* tickSeconds(5)
        expect(hold.pollUnsafe()).toBeUndefined()
        // t = 5 s: another replica takes the lease. The next renewal is at t = 6 s; the renew deadline is 12 s.
        store.overwriteHolder("other")
        yield* TestClock.adjust("1 second")
        expect(hold.pollUnsafe()).toBeDefined()
        expect(yield* Fiber.join(hold)).toEqual({ _tag: "Superseded", holder: "other" })
        // It stepped down without writing: the other holder keeps the lease.
        expect(store.holder()).toBe("other")
      })
  )
})
