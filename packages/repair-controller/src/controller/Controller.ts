/**
 * The running controller: node informer -> work queue -> reconcile workers, plus the zonal-shift refresher,
 * the fleet inventory's batches, the pool-metrics updater and the journal resume. Started only on the leader.
 */
import { Clock, Effect, Metric, Ref, Schedule } from "effect"
import { CloudProvider } from "../cloud/CloudProvider.ts"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { breakerVerdict, CLUSTER_SCOPE } from "../decide/breaker.ts"
import { inFlightOf } from "../decide/decide.ts"
import type { ShiftObservation } from "../decide/zonalShiftGate.ts"
import { activeShifts, shiftedZones } from "../decide/zonalShiftGate.ts"
import type { KubeShape } from "../kube/Kube.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { Placement } from "../domain/Placement.ts"
import * as M from "../observability/metrics.ts"
import { type Attributed, makeGaugeSeries, metricReason } from "../observability/seriesBounds.ts"
import { INVENTORY_BATCH_MS, INVENTORY_REFRESH_MS, makeInventory } from "../owner/Inventory.ts"
import { makeOwners } from "../owner/Owners.ts"
import { makePlacements } from "../owner/Placements.ts"
import { basisOf, makePreProofs } from "../owner/PreProofs.ts"
import { nodeRef } from "../kube/views.ts"
import { LogCaptureHook } from "../repair/LogCaptureHook.ts"
import { makeBlockedNodes } from "./BlockedNodes.ts"
import type { ControllerEnv, DecisionLog } from "./ControllerEnv.ts"
import { makeDrainPool } from "./DrainPool.ts"
import { makeEventRecorder } from "../kube/EventRecorder.ts"
import { initialListFailed, retryInitialList } from "./initialSync.ts"
import { makeKarpenterCache } from "../karpenter/KarpenterCache.ts"
import { makeNodeCache } from "./NodeCache.ts"
import { makeReconciler } from "./Reconciler.ts"
import { makeRebootStore } from "./RebootStore.ts"
import { makeRelapseStore } from "./RelapseStore.ts"
import { makeWaitingRoom } from "./WaitingRoom.ts"
import { holdVerdict, relapsePolicy } from "../decide/relapse.ts"
import { stoodDownZones } from "../decide/zoneBreaker.ts"
import { makeRepairStore } from "./RepairStore.ts"
import { makeSightingStore } from "./SightingStore.ts"
import { makePlannedRepairStore } from "./PlannedRepairStore.ts"
import { makeScheduledEventWatch } from "./ScheduledEventWatch.ts"
import { makeRepairRequestWatch, PROOF_REFRESH_MS } from "./RepairRequestWatch.ts"
import { requestLoop } from "./requestedRepair.ts"
import { nodesToAsk, scheduledEventLoop } from "./plannedRepair.ts"
import { makeTaintFirst } from "../actions/TaintFirst.ts"
import { makeWorkQueue } from "./WorkQueue.ts"

export interface ControllerHandle {
  readonly synced: () => boolean
  readonly env: ControllerEnv
}

const refreshShifts = (env: ControllerEnv) =>
  Effect.gen(function* () {
    const before = yield* Ref.get(env.shifts)
    const now = yield* Clock.currentTimeMillis
    const obs: ShiftObservation = yield* env.cloud.activeZonalShifts.pipe(
      Effect.map((shifts): ShiftObservation => ({ _tag: "Known", shifts })),
      Effect.catch((e) =>
        Metric.update(M.zonalShiftQueryFailures, 1).pipe(
          Effect.andThen(Effect.logWarning("zonal shift query failed", { error: e.message })),
          Effect.as<ShiftObservation>({ _tag: "Unknown", error: e.message })
        )
      )
    )
    yield* Ref.set(env.shifts, obs)
    const active = obs._tag === "Known" ? activeShifts(obs.shifts, now).length : 0
    yield* Metric.update(Metric.withAttributes(M.standDown, { cause: "shift" }), active > 0 ? 1 : 0)
    yield* Metric.update(
      Metric.withAttributes(M.standDown, { cause: "unknown" }),
      obs._tag === "Unknown" && env.config.zonalShift.onUnknown === "standDown" ? 1 : 0
    )
    const key = (o: ShiftObservation) =>
      o._tag === "Unknown"
        ? "unknown"
        : activeShifts(o.shifts, now)
            .map((s) => `${s.zone}/${s.zoneId}`)
            .sort()
            .join(",")
    if (key(before) !== key(obs)) {
      yield* Effect.logInfo("zonal shift state changed", { from: key(before), to: key(obs) })
      // Nodes standing down (or newly affected) look again now rather than at their next requeue.
      for (const n of env.cache.counter.unhealthyNames()) env.queue.add(n)
    }
  })

/** How often held relapse ledgers are looked at: released by an operator (deleted), or quiet long enough. */
export const RELAPSE_RECHECK_MS = 10_000

/** Gauges per pool, zone and relapse ledger: written for the values known now, removed once gone. */
const POOL_GAUGES = {
  breakerOpen: M.breakerOpen,
  unhealthy: M.poolUnhealthy,
  unhealthyAllowed: M.poolUnhealthyAllowed,
  size: M.poolSize,
  repairsInFlight: M.poolRepairsInFlight,
  inFlightBudget: M.poolInFlightBudget,
  failedRepairs: M.poolFailedRepairs
}
const poolSeries = () => makeGaugeSeries(POOL_GAUGES, (pool: string) => ({ pool }))
const zoneSeries = () => makeGaugeSeries({ standDown: M.zoneStandDown }, (zone: string) => ({ zone }))
const holdSeries = (config: ControllerConfig) =>
  makeGaugeSeries(
    { hold: M.relapseHold },
    (l: { readonly pool: string; readonly reason: string; readonly held: boolean }) => ({
      pool: l.pool,
      reason: metricReason(config, l.reason)
    })
  )
type Series = {
  readonly pools: ReturnType<typeof poolSeries>
  readonly zones: ReturnType<typeof zoneSeries>
  readonly holds: ReturnType<typeof holdSeries>
}

/**
 * The pools whose gauges are written: those the counter knows (proven placements and repairs' records) and the
 * configured ones. Never a value only a label named (observability/seriesBounds.ts).
 */
const knownPools = (env: ControllerEnv): ReadonlySet<string> =>
  new Set([...env.cache.counter.stats().pools.keys(), ...Object.keys(env.config.pools)])

/** The relapse-hold and zone stand-down gauges; the zones standing down, as a key that changes when they do. */
const guardMetrics = (env: ControllerEnv, series: Series, now: number) =>
  Effect.gen(function* () {
    let holds = 0
    const ledgers = env.relapse.ledgers().map((l) => {
      const held =
        holdVerdict(
          l,
          relapsePolicy(env.config, l.pool === CLUSTER_SCOPE ? undefined : l.pool, l.reason),
          now
        )._tag === "Held"
      if (held) holds++
      return { pool: l.pool, reason: l.reason, held }
    })
    yield* series.holds.write(ledgers, (l, g) => Metric.update(g.hold, l.held ? 1 : 0))
    yield* Metric.update(M.relapseHolds, holds)
    const zones = env.cache.counter.stats().zones ?? new Map()
    const down = new Set(stoodDownZones(env.config, zones).map((d) => d.zone.zone))
    yield* series.zones.write(zones.keys(), (zone, g) => Metric.update(g.standDown, down.has(zone) ? 1 : 0))
    yield* Metric.update(M.zonesStoodDown, down.size)
    return [...down].sort().join(",")
  })

/**
 * One pool's breaker and pool gauges. The breaker and the in-flight budget are computed as `decide` computes them
 * (a Karpenter NodePool's claims and disruption budgets included).
 */
const poolGauges = (env: ControllerEnv) => (pool: string, g: Attributed<typeof POOL_GAUGES>) =>
  Effect.gen(function* () {
    const stats = env.cache.counter.stats()
    const nodePool = env.owners.pools.facts(pool)
    const v = breakerVerdict(env.config, stats, pool, nodePool?.claims)
    const { count, budget } = inFlightOf(env.config, stats, pool, nodePool, yield* Clock.currentTimeMillis)
    yield* Metric.update(g.breakerOpen, v.open ? 1 : 0)
    yield* Metric.update(g.unhealthy, v.unhealthy)
    yield* Metric.update(g.unhealthyAllowed, v.allowed)
    yield* Metric.update(g.size, v.size)
    yield* Metric.update(g.repairsInFlight, count.repairing)
    yield* Metric.update(g.inFlightBudget, budget.allowed)
    yield* Metric.update(g.failedRepairs, stats.pools.get(pool)?.failed ?? 0)
  })

/** Every known pool's gauges (those of pools gone since are removed), and the process-wide gauges. */
const poolMetrics = (env: ControllerEnv, series: Series) =>
  Effect.gen(function* () {
    yield* series.pools.write(knownPools(env), poolGauges(env))
    yield* Metric.update(M.activeRepairs, env.store.active())
    yield* Metric.update(M.drainsInFlight, env.drains.inFlight())
    yield* Metric.update(M.drainsWaiting, env.drains.waiting())
  })

/** Nodes a `locate` call asks about (the AWS provider splits them into DescribeInstances calls of 190 names). */
const INVENTORY_BATCH_NAMES = 500
/** How long the start waits for the inventory's first answer before the workers start. */
const INVENTORY_FIRST_WAIT = "30 seconds"

/** A failing inventory query is logged at most this often (it is asked again every INVENTORY_BATCH_MS). */
const INVENTORY_WARN_MS = 60_000

/** Asks the cloud about the queued Nodes; a failure keeps them queued, and decisions wait (decide.ts `unlocated`). */
const inventoryFlusher = (inventory: ReturnType<typeof makeInventory>) => {
  let warnedAt = Number.NEGATIVE_INFINITY
  return inventory.flush.pipe(
    Effect.catch((e) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (now - warnedAt < INVENTORY_WARN_MS) return Effect.void
        warnedAt = now
        return Effect.logWarning("fleet inventory query failed; asking again every second", {
          error: e.message,
          unanswered: inventory.pending()
        })
      })
    )
  )
}

/** Placement proofs (owner/Placements.ts) in flight at once: a flood of unhealthy nodes asks the cloud in batches. */
const PLACEMENT_PROOFS_IN_FLIGHT = 8

/** A reconcile that failed outside a repair (e.g. its journal write): again after 2 s, doubling to 5 min. */
const retryAfterMs = (failures: number) => Math.min(2000 * 2 ** Math.max(0, failures - 1), 300_000)

/**
 * 64 workers: a wave of 100+ simultaneous expiries is tainted in two rounds of parallel patches rather than
 * four (expiry -> taint p99, docs/performance.md); drains are bounded separately (drain.maxConcurrent).
 */
export const startController = (
  config: ControllerConfig,
  kube: KubeShape,
  workers = 64,
  /** The what-if replay's record of every decision (whatif/replay.ts). */
  decided?: DecisionLog
) =>
  Effect.gen(function* () {
    const cloud = yield* CloudProvider
    const logCapture = yield* LogCaptureHook
    const queue = yield* makeWorkQueue
    // Informer callbacks run outside any fiber; log through this fiber's context (its JSON logger).
    const runFork = Effect.runForkWith(yield* Effect.context<never>())
    const log = (level: "info" | "warn", msg: string, extra?: Record<string, unknown>) =>
      runFork(level === "warn" ? Effect.logWarning(msg, extra ?? {}) : Effect.logInfo(msg, extra ?? {}))
    // The owner proof that places unhealthy nodes needs the cache, which counts by it: bound below.
    let placementOf: (node: NodeView) => Placement = () => ({ _tag: "Pending" })
    // Healthy nodes count where the cloud's inventory places them (ADR 0017); it recounts a node when answered.
    const inventory = makeInventory({
      locate: cloud.locate,
      settled: (name) => cache.counter.recount(name),
      batchSize: INVENTORY_BATCH_NAMES
    })
    const cache = makeNodeCache(
      kube.http,
      config,
      queue.add,
      log,
      (node) => placementOf(node),
      (node) => inventory.of(node)
    )
    const wakePool = (pool: string) => {
      for (const name of cache.names())
        if (cache.view(name)?.labels[config.poolLabel] === pool) queue.add(name)
    }
    const karpenter = makeKarpenterCache(kube.http, queue.add, wakePool, log)
    // Pools whose counts moved since their gauges were last written; their held-back nodes are woken at once.
    const dirtyPools = new Set<string>()
    const blocked = makeBlockedNodes(queue.add)
    cache.counter.onChange((scope, eased) => {
      if (scope !== CLUSTER_SCOPE) dirtyPools.add(scope)
      if (eased) blocked.eased(scope)
    })
    const series: Series = { pools: poolSeries(), zones: zoneSeries(), holds: holdSeries(config) }
    // A dirty scope may be a pool only an unproven node's label claims: only known pools get gauges.
    const flushPoolMetrics = () => {
      const known = knownPools(env)
      const pools = [...dirtyPools].filter((p) => known.has(p))
      dirtyPools.clear()
      Effect.runSync(series.pools.touch(pools, poolGauges(env)))
    }
    const shifts = yield* Ref.make<ShiftObservation>({ _tag: "Unknown", error: "not queried yet" })
    // Taints first: the steps after a wave's taints and the queued Events wait for them (actions/TaintFirst.ts).
    const taintFirst = makeTaintFirst()
    const events = makeEventRecorder(kube, { holdMs: taintFirst.holdMs })
    const avoidZones = Effect.gen(function* () {
      return shiftedZones(yield* Ref.get(shifts), yield* Clock.currentTimeMillis)
    })
    const store = makeRepairStore(kube, config.namespace, cache.counter.setRepair)
    const preProofs = yield* makePreProofs({
      poolLabel: config.poolLabel,
      inspect: (node) => cloud.inspect(nodeRef(node)),
      live: (name) => {
        const n = cache.get(name)
        return n === undefined
          ? undefined
          : basisOf(config.poolLabel, {
              uid: n.metadata?.uid,
              providerID: n.spec?.providerID,
              labels: n.metadata?.labels
            })
      }
    })
    const owners = makeOwners({ kube, cache, events, cloud, karpenter, avoidZones, repairs: store.records })
    const placements = yield* makePlacements({
      poolLabel: config.poolLabel,
      // Through the pre-proofs' cache: the expiry's pre-proof reuses this answer while it is fresh.
      prove: (node) => Effect.flatMap(preProofs.ask(node), (vouched) => owners.prove(node, vouched)),
      settled: (name) => {
        cache.counter.recount(name)
        queue.add(name)
      },
      maxConcurrent: PLACEMENT_PROOFS_IN_FLIGHT
    })
    placementOf = placements.of
    const env: ControllerEnv = {
      config,
      kube,
      cloud,
      logCapture,
      cache,
      owners,
      preProofs,
      placements,
      inventory,
      store,
      relapse: makeRelapseStore(kube, config, (msg, extra) => Effect.logWarning(msg, extra)),
      reboots: makeRebootStore(kube, config, (msg, extra) => Effect.logWarning(msg, extra)),
      sightings: makeSightingStore(kube, config, (msg, extra) => Effect.logWarning(msg, extra)),
      plannedRepairs: makePlannedRepairStore(kube, config, (msg, extra) => Effect.logWarning(msg, extra)),
      scheduled: makeScheduledEventWatch({
        query: cloud.scheduledEvents,
        nodes: () => nodesToAsk({ cache }),
        wake: queue.add
      }),
      requests: makeRepairRequestWatch(kube.http, config.namespace, queue.add, log),
      waiting: makeWaitingRoom(2 * config.breaker.requeueSeconds * 1000 + 60_000),
      events,
      queue,
      drains: makeDrainPool(config.drain.maxConcurrent, queue.add),
      taintFirst,
      shifts,
      blocked,
      flushPoolMetrics,
      ...(decided !== undefined ? { decided } : {})
    }
    // The first Node list goes first, retried with backoff for as long as the API server is away
    // (initialSync.ts; /readyz stays 503 meanwhile): the journal read and the shift query after it then meet an
    // API server that answers, rather than giving up on the journals of repairs in flight. Nothing reconciles
    // before the workers start below, so the Nodes it enqueues wait for the journals.
    yield* retryInitialList(Effect.tryPromise({ try: () => cache.start(), catch: initialListFailed }))
    yield* retryInitialList(Effect.tryPromise({ try: () => karpenter.start(), catch: initialListFailed }))
    yield* env.requests.refreshProof
    env.requests.start()
    yield* Effect.addFinalizer(() =>
      Effect.promise(() =>
        Promise.all([cache.stop(), karpenter.stop(), env.requests.stop()]).catch(() => undefined)
      ).pipe(Effect.andThen(Effect.sync(() => queue.shutdown())))
    )
    // No repair starts before the journals are read: one started without them could repeat a repair in flight.
    yield* env.store.loadJournal.pipe(
      Effect.tapError((e) =>
        Effect.logWarning("could not read repair journals; retrying before any repair starts", {
          error: e.message
        })
      ),
      Effect.retry(Schedule.min([Schedule.exponential("500 millis"), Schedule.spaced("10 seconds")]))
    )
    // Relapse holds before any repair starts, too: a restart must not repair what a hold held.
    yield* env.relapse.load.pipe(
      Effect.tapError((e) =>
        Effect.logWarning("could not read relapse ledgers; retrying before any repair starts", {
          error: e.message
        })
      ),
      Effect.retry(Schedule.min([Schedule.exponential("500 millis"), Schedule.spaced("10 seconds")]))
    )
    // The reboots too: a restart must not reboot again a node whose fault came back after its reboot.
    yield* env.reboots.load.pipe(
      Effect.tapError((e) =>
        Effect.logWarning("could not read the reboots journal; retrying before any repair starts", {
          error: e.message
        })
      ),
      Effect.retry(Schedule.min([Schedule.exponential("500 millis"), Schedule.spaced("10 seconds")]))
    )
    // And the first sights tolerations start from: without them a restart would start every toleration over.
    yield* Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) => env.sightings.load(now, (name) => cache.get(name)?.metadata?.uid)),
      Effect.tapError((e) =>
        Effect.logWarning("could not read the sightings journal; retrying before any repair starts", {
          error: e.message
        })
      ),
      Effect.retry(Schedule.min([Schedule.exponential("500 millis"), Schedule.spaced("10 seconds")]))
    )
    // The scheduled events repairs were started for: a restart must neither plan them again nor forget the others.
    yield* env.plannedRepairs.load.pipe(
      Effect.tapError((e) =>
        Effect.logWarning("could not read the planned repairs journal; retrying before any repair starts", {
          error: e.message
        })
      ),
      Effect.retry(Schedule.min([Schedule.exponential("500 millis"), Schedule.spaced("10 seconds")]))
    )
    yield* Effect.forkScoped(env.sightings.writer)
    yield* Effect.forkScoped(env.plannedRepairs.writer)
    yield* refreshShifts(env)
    // The pools' and zones' sizes before the first decision: asked once for every Node (a failure or a slow cloud
    // leaves them small, which only holds repairs back, and the batches below ask again).
    for (const name of cache.names()) {
      const view = cache.view(name)
      if (view !== undefined) inventory.ensure(view)
    }
    const flushInventory = inventoryFlusher(inventory)
    yield* flushInventory.pipe(Effect.timeout(INVENTORY_FIRST_WAIT), Effect.ignore)
    for (const name of env.store.journalNodeNames()) queue.add(name)
    yield* Effect.logInfo("controller started", {
      nodes: cache.names().length,
      journals: env.store.journalNodeNames().length
    })

    const failures = new Map<string, number>()
    const reconcile = makeReconciler(env)
    const worker = Effect.gen(function* () {
      for (;;) {
        const key = yield* queue.take
        if (key === undefined) return
        yield* reconcile(key).pipe(
          Effect.tap(() => Effect.sync(() => failures.delete(key))),
          Effect.catchCause((cause) =>
            Effect.suspend(() => {
              const n = (failures.get(key) ?? 0) + 1
              failures.set(key, n)
              return Effect.logWarning("reconcile failed; retrying", {
                node: key,
                attempt: n,
                cause: String(cause)
              }).pipe(Effect.andThen(Effect.sync(() => queue.addAfter(key, retryAfterMs(n)))))
            })
          ),
          Effect.ensuring(Effect.sync(() => (dirtyPools.size > 0 ? flushPoolMetrics() : undefined))),
          Effect.ensuring(Effect.sync(() => queue.done(key)))
        )
      }
    })
    for (let i = 0; i < workers; i++) yield* Effect.forkScoped(worker)
    if (config.scheduledEvents.enabled) yield* Effect.forkScoped(scheduledEventLoop(env))
    yield* Effect.forkScoped(requestLoop(env, PROOF_REFRESH_MS))
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.sleep(`${config.zonalShift.refreshSeconds} seconds`).pipe(Effect.andThen(refreshShifts(env)))
      )
    )
    const wakeScope = (scope: string) => {
      if (scope !== CLUSTER_SCOPE) return wakePool(scope)
      for (const n of env.cache.counter.unhealthyNames()) queue.add(n)
    }
    // Held relapse ledgers: an operator's release (the ledger deleted) or a quiet period lifts the hold.
    yield* Effect.forkScoped(
      Effect.forever(
        env.relapse.whenHeld.pipe(
          Effect.andThen(Effect.sleep(RELAPSE_RECHECK_MS)),
          Effect.andThen(Clock.currentTimeMillis),
          Effect.flatMap((now) => env.relapse.recheck(now)),
          Effect.tap((lifted) =>
            Effect.forEach(
              lifted,
              (l) =>
                Effect.logInfo("relapse hold lifted", { pool: l.pool, reason: l.reason, by: l.by }).pipe(
                  Effect.andThen(Effect.sync(() => wakeScope(l.pool)))
                ),
              { discard: true }
            )
          ),
          Effect.catch((e) => Effect.logWarning("could not recheck relapse holds", { error: e.message }))
        )
      )
    )
    yield* Effect.forkScoped(
      Effect.forever(
        inventory.whenQueued.pipe(
          Effect.andThen(Effect.sleep(INVENTORY_BATCH_MS)),
          Effect.andThen(flushInventory)
        )
      )
    )
    if (cloud.placementsFixed !== true)
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.sleep(INVENTORY_REFRESH_MS).pipe(Effect.andThen(Effect.sync(inventory.refresh)))
        )
      )
    let zonesDown = ""
    // Every pool every 15 s: a change that moves no node count (a repair that failed and keeps its slot) marks no
    // pool dirty. The pools are read afresh each round (a keys() iterator built once is spent after the first).
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.suspend(() => poolMetrics(env, series)).pipe(
          Effect.andThen(Clock.currentTimeMillis),
          Effect.flatMap((now) => guardMetrics(env, series, now)),
          Effect.tap((key) =>
            Effect.suspend(() => {
              if (key === zonesDown) return Effect.void
              const from = zonesDown
              zonesDown = key
              // Nodes standing down (or newly in a stood-down zone) look again now, not at their next requeue.
              for (const n of env.cache.counter.unhealthyNames()) queue.add(n)
              return Effect.logInfo("zone stand-down changed", { from, to: key })
            })
          ),
          Effect.andThen(Effect.sleep("15 seconds"))
        )
      )
    )
    // The resync: every cached Node and every journal's node once a period, so a missed change costs a period.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.sleep(`${config.resyncSeconds} seconds`).pipe(
          Effect.andThen(
            Effect.sync(() => {
              for (const name of cache.names()) queue.add(name)
              for (const name of env.store.journalNodeNames()) queue.add(name)
            })
          )
        )
      )
    )
    return { synced: cache.synced, env } satisfies ControllerHandle
  })
