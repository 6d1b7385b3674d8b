/**
 * Where relapse ledgers live (decide/relapse.ts, domain/RelapseLedger.ts): one ConfigMap per pool and reason in
 * the controller's namespace (label `nodemend.io/relapse-ledger=true`), and an in-memory copy of them. Journal
 * first, memory after, as the repair journal (RepairStore.ts): a restarted controller keeps its holds.
 * `kubectl nodemend release <pool> <reason>` deletes a held ledger's ConfigMap; `recheck` finds that (404) and
 * forgets the ledger, so the pool's repairs of that reason start over. Writes are serialized (they are rare: a
 * repair that ended well, a relapse, a hold lifted).
 */
import type { KubeError } from "@nodemend/kube-access"
import { Effect, Latch, Result, Semaphore } from "effect"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { CLUSTER_SCOPE } from "../decide/breaker.ts"
import type { PolicyMatch } from "../decide/policyMatch.ts"
import {
  emptyLedger,
  keepsLedger,
  ledgerRepairOf,
  liftsByItself,
  observe,
  quietUntil,
  recordRepair,
  relapsePolicy,
  replacementFailed,
  sightingsOf,
  worthObserving
} from "../decide/relapse.ts"
import type { NodeView } from "../domain/NodeView.ts"
import {
  type Hold,
  ledgerConfigMapName,
  ledgerKey,
  parseLedger,
  RELAPSE_LEDGER_LABEL,
  type Relapse,
  type RelapseLedger,
  serializeLedger
} from "../domain/RelapseLedger.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { KubeShape } from "../kube/Kube.ts"

export interface Sighted {
  readonly ledger: RelapseLedger
  readonly relapse: Relapse
  readonly engaged?: Hold
}

export interface Lifted {
  readonly pool: string
  readonly reason: string
  readonly by: "operator" | "quiet"
}

export interface RelapseStore {
  readonly load: Effect.Effect<void, KubeError>
  readonly ledger: (scope: string, reason: string) => RelapseLedger | undefined
  readonly ledgers: () => ReadonlyArray<RelapseLedger>
  /** A repair ended well: it joins its pool and reason's ledger. */
  readonly repaired: (r: RepairRecord, now: number) => Effect.Effect<void, KubeError>
  /** The repair's replacement `node` failed its health gate: a relapse of the repair, in its pool and reason's ledger. */
  readonly replacementFailed: (
    r: RepairRecord,
    node: string,
    now: number
  ) => Effect.Effect<Sighted | undefined, KubeError>
  /** A node (not under repair) matching `matches`: each a relapse or not; the relapses it was. */
  readonly sighted: (
    node: NodeView,
    scope: string,
    matches: ReadonlyArray<PolicyMatch>,
    now: number
  ) => Effect.Effect<ReadonlyArray<Sighted>, KubeError>
  /** Held ledgers: released by an operator (ConfigMap gone) or quiet long enough: lifted and forgotten. */
  readonly recheck: (now: number) => Effect.Effect<ReadonlyArray<Lifted>, KubeError>
  /** Waits until a ledger holds: `recheck` looks only at held ones, so it need not run while none is. */
  readonly whenHeld: Effect.Effect<void>
}

export const makeRelapseStore = (
  kube: KubeShape,
  config: ControllerConfig,
  log: (msg: string, extra: Record<string, unknown>) => Effect.Effect<void>
): RelapseStore => {
  const namespace = config.namespace
  const ledgers = new Map<string, RelapseLedger>()
  const lock = Semaphore.makeUnsafe(1)
  /** Open while a ledger may hold; closed by a recheck that finds none. */
  const heldLatch = Latch.makeUnsafe(false)
  const remember = (l: RelapseLedger) => {
    ledgers.set(ledgerKey(l.pool, l.reason), l)
    if (l.hold !== undefined) heldLatch.openUnsafe()
  }
  const policyOf = (l: { readonly pool: string; readonly reason: string }) =>
    relapsePolicy(config, l.pool === CLUSTER_SCOPE ? undefined : l.pool, l.reason)

  const write = (l: RelapseLedger, exists: boolean) =>
    kube
      .upsertConfigMap(
        {
          metadata: {
            name: ledgerConfigMapName(l.pool, l.reason),
            namespace,
            labels: { [RELAPSE_LEDGER_LABEL]: "true" }
          },
          data: { ledger: serializeLedger(l) }
        },
        exists
      )
      .pipe(Effect.andThen(Effect.sync(() => remember(l))))

  /** The ledger as the journal has it now: one an operator deleted (released) starts over. */
  const current = (pool: string, reason: string, conditionType: string) =>
    Effect.gen(function* () {
      const known = ledgers.get(ledgerKey(pool, reason))
      if (known === undefined) return { ledger: emptyLedger(pool, reason, conditionType), exists: false }
      const gone = yield* kube.readConfigMap(namespace, ledgerConfigMapName(pool, reason)).pipe(
        Effect.as(false),
        Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.succeed(true) : Effect.fail(e)))
      )
      if (!gone) return { ledger: known, exists: true }
      ledgers.delete(ledgerKey(pool, reason))
      yield* log("relapse ledger deleted (released by an operator); starting over", { pool, reason })
      return { ledger: emptyLedger(pool, reason, conditionType), exists: false }
    })

  return {
    load: kube.listConfigMaps(namespace, `${RELAPSE_LEDGER_LABEL}=true`).pipe(
      Effect.flatMap((cms) =>
        Effect.forEach(
          cms,
          (cm) => {
            const r = parseLedger(cm.data?.ledger ?? "")
            if (Result.isFailure(r))
              return log("unreadable relapse ledger; ignored (delete it to start over)", {
                configMap: cm.metadata?.name,
                error: r.failure
              })
            if (ledgerConfigMapName(r.success.pool, r.success.reason) !== cm.metadata?.name)
              return log("relapse ledger under another name; ignored", { configMap: cm.metadata?.name })
            return Effect.sync(() => remember(r.success))
          },
          { discard: true }
        )
      )
    ),
    ledger: (scope, reason) => ledgers.get(ledgerKey(scope, reason)),
    ledgers: () => [...ledgers.values()],
    repaired: (r, now) => {
      const pool = r.node.pool ?? CLUSTER_SCOPE
      if (!keepsLedger(r.reason, policyOf({ pool, reason: r.reason }))) return Effect.void
      return lock.withPermits(1)(
        Effect.gen(function* () {
          const { ledger, exists } = yield* current(pool, r.reason, r.conditionType)
          const next = recordRepair(
            ledger,
            ledgerRepairOf({
              id: r.id,
              node: r.node.name,
              action: r.action,
              escalated: r.escalatedFrom !== undefined,
              replacementNode: r.replacement?.nodeName,
              replacementInstance: r.replacement?.instanceId,
              startedAt: Date.parse(r.startedAt),
              finishedAt: r.finishedAt !== undefined ? Date.parse(r.finishedAt) : now
            }),
            policyOf(ledger),
            now
          )
          yield* write(next, exists)
        })
      )
    },
    replacementFailed: (r, node, now) => {
      const pool = r.node.pool ?? CLUSTER_SCOPE
      if (!keepsLedger(r.reason, policyOf({ pool, reason: r.reason }))) return Effect.succeed(undefined)
      const up = Date.parse(r.replacementReadyAt ?? r.replacementRequestedAt ?? "")
      const relapse = {
        node,
        repairId: r.id,
        repairedNode: r.node.name,
        kind: "replacement" as const,
        at: now,
        afterMs: Number.isNaN(up) ? 0 : Math.max(0, now - up)
      }
      return lock.withPermits(1)(
        Effect.gen(function* () {
          const { ledger, exists } = yield* current(pool, r.reason, r.conditionType)
          const o = replacementFailed(ledger, relapse, policyOf(ledger), now)
          if (o.relapse === undefined) return undefined
          yield* write(o.ledger, exists)
          return {
            ledger: o.ledger,
            relapse: o.relapse,
            ...(o.engaged !== undefined ? { engaged: o.engaged } : {})
          }
        })
      )
    },
    sighted: (node, scope, matches, now) =>
      Effect.gen(function* () {
        const out: Sighted[] = []
        for (const { match: m, sighting } of sightingsOf(node, matches)) {
          const known = ledgers.get(ledgerKey(scope, m.reason))
          if (!worthObserving(known)) continue
          const policy = policyOf(known)
          // Cheap pre-check outside the lock: most sightings are no relapse.
          if (observe(known, sighting, policy, now).relapse === undefined) continue
          const seen = yield* lock.withPermits(1)(
            Effect.gen(function* () {
              const { ledger, exists } = yield* current(scope, m.reason, m.conditionType)
              const o = observe(ledger, sighting, policy, now)
              if (o.relapse === undefined) return undefined
              yield* write(o.ledger, exists)
              return {
                ledger: o.ledger,
                relapse: o.relapse,
                ...(o.engaged !== undefined ? { engaged: o.engaged } : {})
              }
            })
          )
          if (seen !== undefined) out.push(seen)
        }
        return out
      }),
    recheck: (now) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const lifted: Lifted[] = []
          for (const l of [...ledgers.values()]) {
            if (l.hold === undefined) continue
            const { ledger, exists } = yield* current(l.pool, l.reason, l.conditionType)
            if (!exists) {
              lifted.push({ pool: l.pool, reason: l.reason, by: "operator" })
              continue
            }
            const policy = policyOf(ledger)
            if (!liftsByItself(ledger, policy, now)) continue
            // Quiet long enough (or the policy turned off): the hold lifts and the ledger starts over.
            yield* log("relapse hold lifted after its quiet period", {
              pool: l.pool,
              reason: l.reason,
              quietUntil: new Date(quietUntil(ledger, policy) ?? now).toISOString()
            })
            yield* kube.deleteConfigMap(namespace, ledgerConfigMapName(l.pool, l.reason))
            ledgers.delete(ledgerKey(l.pool, l.reason))
            lifted.push({ pool: l.pool, reason: l.reason, by: "quiet" })
          }
          if (![...ledgers.values()].some((l) => l.hold !== undefined)) heldLatch.closeUnsafe()
          return lifted
        })
      ),
    whenHeld: heldLatch.await
  }
}
