/**
 * Leader election on a coordination.k8s.io Lease (as client-go's leaderelection does it). Read, then create or
 * replace carrying resourceVersion, so a stale write gets 409. Expiry is judged on the local clock from
 * when this replica last saw the record change, so clock skew between replicas does not matter.
 */
import { Clock, Duration, Effect, Metric, Option, Schedule } from "effect"
import type { KubeShape } from "../kube/Kube.ts"
import { type Lease, microTime } from "../kube/types.ts"
import { isLeader } from "../observability/metrics.ts"

export interface LeaseOptions {
  readonly namespace: string
  readonly name: string
  readonly identity: string
  readonly leaseDurationSeconds: number
  readonly renewIntervalSeconds: number
}

export const makeLeaseLock = (kube: KubeShape, o: LeaseOptions) => {
  let seen = ""
  let seenAt = 0
  /** true while this replica holds the lease. */
  const tryAcquireOrRenew = Effect.gen(function* () {
    const now = microTime()
    const existing = yield* kube.readLease(o.namespace, o.name).pipe(
      Effect.map((l): Lease | undefined => l),
      Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.succeed(undefined) : Effect.fail(e)))
    )
    if (existing === undefined) {
      const spec = {
        holderIdentity: o.identity,
        leaseDurationSeconds: o.leaseDurationSeconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0
      }
      return yield* kube
        .createLease(o.namespace, { metadata: { name: o.name, namespace: o.namespace }, spec })
        .pipe(
          Effect.as(true),
          Effect.catchTag("KubeError", (e) => (e.code === 409 ? Effect.succeed(false) : Effect.fail(e)))
        )
    }
    const s = existing.spec ?? {}
    const record = `${s.holderIdentity}|${String(s.renewTime ?? "")}`
    if (record !== seen) {
      seen = record
      seenAt = Date.now()
    }
    const mine = s.holderIdentity === o.identity
    if (
      !mine &&
      s.holderIdentity &&
      Date.now() < seenAt + (s.leaseDurationSeconds ?? o.leaseDurationSeconds) * 1000
    )
      return false
    const spec = {
      ...s,
      holderIdentity: o.identity,
      leaseDurationSeconds: o.leaseDurationSeconds,
      renewTime: now,
      acquireTime: mine ? s.acquireTime : now,
      leaseTransitions: (s.leaseTransitions ?? 0) + (mine ? 0 : 1)
    }
    return yield* kube.replaceLease(o.namespace, o.name, { ...existing, spec }).pipe(
      Effect.tap(() =>
        Effect.sync(() => {
          seen = `${o.identity}|${now}`
          seenAt = Date.now()
        })
      ),
      Effect.as(true),
      Effect.catchTag("KubeError", (e) => (e.code === 409 ? Effect.succeed(false) : Effect.fail(e)))
    )
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
        Effect.logWarning("lease attempt failed", { error: e.message }).pipe(Effect.as(false))
      ),
      Effect.repeat({
        until: (leading) => leading,
        schedule: Schedule.spaced(`${o.renewIntervalSeconds} seconds`)
      })
    )
    yield* Metric.update(isLeader, 1)
    yield* Effect.logInfo("acquired leadership", { identity: o.identity })
    return lock
  })

/**
 * Renews forever; returns (so the caller can stop) once renewal has failed for 80% of a lease duration (client-go's
 * renew deadline). Each attempt is cut off at that deadline: one request may hang for the HTTP timeout (30 s),
 * longer than a lease (15 s), and a replica waiting on it would go on leading after another one took the lease.
 */
export const holdLeadership = (lock: ReturnType<typeof makeLeaseLock>, o: LeaseOptions) =>
  Effect.gen(function* () {
    const renewDeadlineMs = o.leaseDurationSeconds * 1000 * 0.8
    let lastOk = yield* Clock.currentTimeMillis
    for (;;) {
      yield* Effect.sleep(`${o.renewIntervalSeconds} seconds`)
      const left = lastOk + renewDeadlineMs - (yield* Clock.currentTimeMillis)
      const ok =
        left > 0 &&
        (yield* lock.tryAcquireOrRenew.pipe(
          Effect.timeoutOption(Duration.millis(left)),
          Effect.map((renewed) => Option.getOrElse(renewed, () => false)),
          Effect.catch(() => Effect.succeed(false))
        ))
      const now = yield* Clock.currentTimeMillis
      if (ok) lastOk = now
      else if (now - lastOk >= renewDeadlineMs) {
        yield* Metric.update(isLeader, 0)
        yield* Effect.logError("lost leadership", { identity: o.identity })
        return
      }
    }
  })
