/**
 * Where repair records live: the journal, one ConfigMap per repair in the controller's own namespace, which only
 * the controller writes (no node, agent or kubelet identity can), and an in-memory copy of it. The Node's own
 * objects are never read back as repair state: a node can write its annotations (docs/security.md).
 * Journal first, memory after: the journal is never behind what the controller has acted on.
 */
import { REPAIR_JOURNAL_LABEL } from "@nodemend/reason-codes"
import { Effect, Result } from "effect"
import type { KubeShape } from "../kube/Kube.ts"
import type { KubeError } from "@nodemend/kube-access"
import { parseRecord, type RepairRecord, serializeRecord } from "../domain/RepairRecord.ts"
import type { RepairSlot } from "./PoolCounter.ts"

const JOURNAL_PREFIX = "nodemend-repair-"
export const journalName = (nodeName: string) => `${JOURNAL_PREFIX}${nodeName}`.slice(0, 253)

export type StoredRecord =
  | { readonly _tag: "None" }
  | { readonly _tag: "Record"; readonly record: RepairRecord }
  | { readonly _tag: "Invalid"; readonly error: string }

export interface RepairStore {
  readonly get: (nodeName: string) => StoredRecord
  readonly loadJournal: Effect.Effect<void, KubeError>
  readonly persist: (r: RepairRecord) => Effect.Effect<void, KubeError>
  /**
   * Holds `r` in memory only, unjournaled until `flush` (or the next `persist`): for a step whose replay is
   * harmless (the taint's outcome), so a wave's other starts get the API server first. A crash before the flush
   * resumes from the journaled step and repeats it.
   */
  readonly stage: (r: RepairRecord) => void
  /** Journals the node's staged record, if it has one (before the repair acts again). */
  readonly flush: (nodeName: string) => Effect.Effect<void, KubeError>
  /** Deletes the repair's journal entry (a failed repair keeps its entry for an operator; its caller keeps it). */
  readonly finish: (r: RepairRecord) => Effect.Effect<void, KubeError>
  /** Forgets a kept (failed) record whose journal entry an operator has deleted; true when it did. */
  readonly forgetIfCleared: (nodeName: string) => Effect.Effect<boolean, KubeError>
  readonly journalNodeNames: () => ReadonlyArray<string>
  /** Every readable record, as journaled (in flight, and failed ones kept for an operator). */
  readonly records: () => ReadonlyArray<RepairRecord>
  /** The repaired node whose replacement is `replacementName`. */
  readonly originalOf: (replacementName: string) => string | undefined
  readonly active: () => number
  /** Nodes whose repair failed and counts against `pool` (undefined: the cluster scope) until an operator acts. */
  readonly failedIn: (pool: string | undefined) => ReadonlyArray<string>
}

/**
 * `onRecord(name, slot)`: a record appeared, changed or went (undefined). The breaker counts recorded nodes as
 * unhealthy and the in-flight budget counts them against the pool their record names.
 */
export const makeRepairStore = (
  kube: KubeShape,
  namespace: string,
  onRecord: (nodeName: string, slot: RepairSlot | undefined) => void
): RepairStore => {
  const records = new Map<string, RepairRecord>()
  /** Nodes whose record in `records` is ahead of their journal entry (`stage`). */
  const staged = new Set<string>()
  const invalid = new Map<string, string>()
  const replacementOf = new Map<string, string>()

  const remember = (r: RepairRecord) => {
    records.set(r.node.name, r)
    invalid.delete(r.node.name)
    if (r.replacement?.nodeName !== undefined) replacementOf.set(r.replacement.nodeName, r.node.name)
    onRecord(r.node.name, { pool: r.node.pool, zone: r.node.zone, failed: r.phase === "Failed" })
  }

  const forget = (nodeName: string) => {
    const r = records.get(nodeName)
    if (r?.replacement?.nodeName !== undefined) replacementOf.delete(r.replacement.nodeName)
    records.delete(nodeName)
    staged.delete(nodeName)
    invalid.delete(nodeName)
    onRecord(nodeName, undefined)
  }

  const loadOne = (name: string, text: string) => {
    const r = parseRecord(text)
    // Unreadable (or written by an older version): that node is left alone, and an operator is told.
    if (Result.isFailure(r)) {
      invalid.set(name.slice(JOURNAL_PREFIX.length), r.failure)
      onRecord(name.slice(JOURNAL_PREFIX.length), { byLabel: true, failed: false })
      return Effect.logWarning("unreadable repair journal; not acting on its node", {
        configMap: name,
        error: r.failure
      })
    }
    if (journalName(r.success.node.name) !== name)
      return Effect.logWarning("repair journal names another node; ignored", { configMap: name })
    remember(r.success)
    return Effect.void
  }

  // A record this store holds has its journal entry: patched in one request (a create would answer 409 first).
  const persist = (r: RepairRecord) =>
    kube
      .upsertConfigMap(
        {
          metadata: {
            name: journalName(r.node.name),
            namespace,
            labels: { [REPAIR_JOURNAL_LABEL]: "true" }
          },
          data: { record: serializeRecord(r) }
        },
        records.has(r.node.name)
      )
      .pipe(
        Effect.andThen(
          Effect.sync(() => {
            staged.delete(r.node.name)
            remember(r)
          })
        )
      )

  return {
    get: (nodeName) => {
      const r = records.get(nodeName)
      if (r !== undefined) return { _tag: "Record", record: r }
      const error = invalid.get(nodeName)
      return error === undefined ? { _tag: "None" } : { _tag: "Invalid", error }
    },
    loadJournal: kube.listConfigMaps(namespace, `${REPAIR_JOURNAL_LABEL}=true`).pipe(
      Effect.flatMap((cms) =>
        Effect.forEach(cms, (cm) => loadOne(cm.metadata?.name ?? "", cm.data?.record ?? ""), {
          discard: true
        })
      )
    ),
    persist,
    stage: (r) => {
      if (!records.has(r.node.name)) throw new Error(`staged a record never journaled: ${r.node.name}`)
      staged.add(r.node.name)
      remember(r)
    },
    flush: (nodeName) => {
      const r = records.get(nodeName)
      return r !== undefined && staged.has(nodeName) ? persist(r) : Effect.void
    },
    finish: (r) =>
      kube
        .deleteConfigMap(namespace, journalName(r.node.name))
        .pipe(Effect.andThen(Effect.sync(() => forget(r.node.name)))),
    forgetIfCleared: (nodeName) =>
      kube.readConfigMap(namespace, journalName(nodeName)).pipe(
        Effect.as(false),
        Effect.catchTag("KubeError", (e) =>
          e.code === 404 ? Effect.sync(() => forget(nodeName)).pipe(Effect.as(true)) : Effect.fail(e)
        )
      ),
    journalNodeNames: () => [...records.keys()],
    records: () => [...records.values()],
    originalOf: (name) => replacementOf.get(name),
    active: () => [...records.values()].filter((r) => r.phase !== "Succeeded" && r.phase !== "Failed").length,
    failedIn: (pool) =>
      [...records.values()]
        .filter((r) => r.phase === "Failed" && r.node.pool === pool)
        .map((r) => r.node.name)
  }
}
