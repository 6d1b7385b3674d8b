/**
 * Leader election on a coordination.k8s.io Lease (as client-go's leaderelection does it). Read, then create or
 * replace carrying resourceVersion, so a stale write gets 409. Expiry is judged on the local clock from
 * when this replica last saw the record change, so clock skew between replicas does not matter.
 *
 * One departure from client-go: a leader that reads another holder on the Lease steps down at once. client-go
 * only marks itself not-leader and keeps polling until its renew deadline, but every poll in that window
 * fails the same way (the other holder's lease is fresh for a whole lease duration, longer than the renew
 * deadline), so waiting buys nothing and leaves two replicas tainting, draining and terminating meanwhile.
 */
import { Clock, Duration, Effect, Metric, Option, Schedule } from "effect"
import type { KubeShape } from "../kube/Kube.ts"
import { type KubeError, type Lease, type LeaseSpec, microTime } from "@nodemend/kube-access"
import { isLeader } from "../observability/metrics.ts"

export interface LeaseOptions {
  readonly namespace: string
  readonly name: string
  readonly identity: string
  readonly leaseDurationSeconds: number
  readonly renewIntervalSeconds: number
}

/** What to do with the Lease as read (pure). */
export type LeaseStep =
  | { readonly _tag: "Create" }
  /** Ours: write a new renewTime. */
  | { readonly _tag: "Renew" }
  /** Nobody holds it, or the holder let it expire: write ourselves in. */
  | { readonly _tag: "TakeOver" }
  /** Another holder, and its lease is still running on our clock. */
  | { readonly _tag: "HeldByOther"; readonly holder: string }

/**
 * `observedAtMs`: when this replica first saw the record as it is now (local clock). An empty holder is
 * nobody (a released lease), as in client-go.
 */
export const leaseStep = (
  spec: LeaseSpec | undefined,
  identity: string,
  observedAtMs: number,
  nowMs: number,
  defaultDurationSeconds: number
): LeaseStep => {
  if (spec === undefined) return { _tag: "Create" }
  const holder = spec.holderIdentity ?? ""
  if (holder === identity) return { _tag: "Renew" }
  if (holder === "") return { _tag: "TakeOver" }
  const validUntil = observedAtMs + (spec.leaseDurationSeconds ?? defaultDurationSeconds) * 1000
  return nowMs < validUntil ? { _tag: "HeldByOther", holder } : { _tag: "TakeOver" }
}

/** What one attempt on the Lease came to. */
export type LeaseAttempt =
  | { readonly _tag: "Leading" }
  /** Another replica holds it: read so, or read so right after losing a write (409) to it. */
  | { readonly _tag: "HeldByOther"; readonly holder: string }
  /** A write lost a race (409) but the record does not name another holder; the next attempt reads again. */
  | { readonly _tag: "Contended" }

const LEADING: LeaseAttempt = { _tag: "Leading" }
const CONTENDED: LeaseAttempt = { _tag: "Contended" }

export interface LeaseLock {
  readonly tryAcquireOrRenew: Effect.Effect<LeaseAttempt, KubeError>
}

export const makeLeaseLock = (kube: KubeShape, o: LeaseOptions): LeaseLock => {
  let seen = ""
  let seenAt = 0
  /** Notes when the record last changed (local clock): expiry is counted from there. */
  const observe = (s: LeaseSpec) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const record = `${s.holderIdentity ?? ""}|${String(s.renewTime ?? "")}`
      if (record !== seen) {
        seen = record
        seenAt = now
      }
    })
  const isConflict = (e: KubeError) => e.code === 409
  /** After a lost write: who holds it now decides between "step down" and "try again". */
  const afterConflict = Effect.gen(function* () {
    const lease = yield* kube.readLease(o.namespace, o.name)
    const s = lease.spec ?? {}
    yield* observe(s)
    const holder = s.holderIdentity ?? ""
    return holder !== "" && holder !== o.identity ? ({ _tag: "HeldByOther", holder } as const) : CONTENDED
  })

  const tryAcquireOrRenew = Effect.gen(function* () {
    const existing = yield* kube.readLease(o.namespace, o.name).pipe(
      Effect.map((l): Lease | undefined => l),
      Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.succeed(undefined) : Effect.fail(e)))
    )
    if (existing?.spec !== undefined) yield* observe(existing.spec)
    const nowMs = yield* Clock.currentTimeMillis
    const now = microTime(nowMs)
    const step = leaseStep(
      existing === undefined ? undefined : (existing.spec ?? {}),
      o.identity,
      seenAt,
      nowMs,
      o.leaseDurationSeconds
    )
    switch (step._tag) {
      case "HeldByOther":
        return step
      case "Create": {
        const spec = {
          holderIdentity: o.identity,
          leaseDurationSeconds: o.leaseDurationSeconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: 0
        }
        // AlreadyExists: another replica created it first; the next attempt reads who.
        return yield* kube
          .createLease(o.namespace, { metadata: { name: o.name, namespace: o.namespace }, spec })
          .pipe(
            Effect.as(LEADING),
            Effect.catchTag("KubeError", (e) => (isConflict(e) ? Effect.succeed(CONTENDED) : Effect.fail(e)))
          )
      }
      case "Renew":
      case "TakeOver": {
        const s = existing?.spec ?? {}
        const mine = step._tag === "Renew"
        const spec = {
          ...s,
          holderIdentity: o.identity,
          leaseDurationSeconds: o.leaseDurationSeconds,
          renewTime: now,
          acquireTime: mine ? s.acquireTime : now,
          leaseTransitions: (s.leaseTransitions ?? 0) + (mine ? 0 : 1)
        }
        return yield* kube.replaceLease(o.namespace, o.name, { ...existing, spec }).pipe(
          Effect.tap(() => observe(spec)),
          Effect.as(LEADING),
          Effect.catchTag("KubeError", (e) => (isConflict(e) ? afterConflict : Effect.fail(e)))
        )
      }
    }
  })
  return { tryAcquireOrRenew }
}

/** Blocks until this replica leads. */
export const acquireLeadership = (kube: KubeShape, o: LeaseOptions) =>
  Effect.gen(function* () {
    const lock = makeLeaseLock(kube, o)
    yield* Effect.logInfo("waiting for leadership", {
      lease: `${o.namespace}/${o.name}`,
      identity: o.identity
    })
    yield* lock.tryAcquireOrRenew.pipe(
      Effect.catch((e) =>
        Effect.logWarning("lease attempt failed", { error: e.message }).pipe(Effect.as(CONTENDED))
      ),
      Effect.repeat({
        until: (a) => a._tag === "Leading",
        schedule: Schedule.spaced(`${o.renewIntervalSeconds} seconds`)
      })
    )
    yield* Metric.update(isLeader, 1)
    yield* Effect.logInfo("acquired leadership", { identity: o.identity })
    return lock
  })

/** Why holdLeadership returned. */
export type LeadershipEnd =
  | { readonly _tag: "Superseded"; readonly holder: string }
  | { readonly _tag: "RenewDeadlinePassed" }
  /** The thread that acts has not run for a renew deadline: renewing for it would keep a hung leader (LeaseKeeper.ts). */
  | { readonly _tag: "ControllerStalled"; readonly stalledMs: number }
  /** The renewals' own thread failed (LeaseKeeper.ts). */
  | { readonly _tag: "KeeperFailed"; readonly message: string }

/** What holdLeadership reports and asks of the thread it renews for (LeaseKeeper.ts); both optional. */
export interface HoldHooks {
  /** Each successful renewal's round trip. */
  readonly renewed?: (ms: number) => void
  /** How long the acting thread has not run, in ms (0: running). A renew deadline of it ends leadership. */
  readonly stalledMs?: () => number
}

/**
 * Renews forever; returns (so the caller stops acting) the moment an attempt finds another holder on the
 * Lease, or once renewal has failed for 80% of a lease duration (client-go's renew deadline). Each attempt is
 * cut off at that deadline: one request may hang for the HTTP timeout (30 s), longer than a lease (15 s), and
 * a replica waiting on it would go on leading after another one took the lease.
 */
export const holdLeadership = (lock: LeaseLock, o: LeaseOptions, hooks: HoldHooks = {}) =>
  Effect.gen(function* () {
    const renewDeadlineMs = o.leaseDurationSeconds * 1000 * 0.8
    let lastOk = yield* Clock.currentTimeMillis
    const stepDown = (end: LeadershipEnd) =>
      Metric.update(isLeader, 0).pipe(
        Effect.andThen(Effect.logError("lost leadership", { identity: o.identity, ...end })),
        Effect.as(end)
      )
    for (;;) {
      yield* Effect.sleep(`${o.renewIntervalSeconds} seconds`)
      const stalledMs = hooks.stalledMs?.() ?? 0
      if (stalledMs >= renewDeadlineMs) return yield* stepDown({ _tag: "ControllerStalled", stalledMs })
      const startedAt = yield* Clock.currentTimeMillis
      const left = lastOk + renewDeadlineMs - startedAt
      const attempt: LeaseAttempt =
        left > 0
          ? yield* lock.tryAcquireOrRenew.pipe(
              Effect.timeoutOption(Duration.millis(left)),
              Effect.map((a) => Option.getOrElse(a, () => CONTENDED)),
              Effect.catch(() => Effect.succeed(CONTENDED))
            )
          : CONTENDED
      const now = yield* Clock.currentTimeMillis
      if (attempt._tag === "Leading") hooks.renewed?.(now - startedAt)
      if (attempt._tag === "HeldByOther")
        return yield* stepDown({ _tag: "Superseded", holder: attempt.holder })
      if (attempt._tag === "Leading") lastOk = now
      else if (now - lastOk >= renewDeadlineMs) return yield* stepDown({ _tag: "RenewDeadlinePassed" })
    }
  })
