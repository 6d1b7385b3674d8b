/**
 * Where repair records live: the Node annotation (always, while the Node exists), a journal ConfigMap from
 * the termination step on (the Node goes away), and an in-memory copy that is never older than either, so
 * a lagging informer cache cannot rewind a repair. Journal first, then annotation: the journal is never behind.
 */
import { Effect, Result } from "effect"
import { REPAIR_ANNOTATION } from "../decide/NodeView.ts"
import type { KubeShape } from "../kube/Kube.ts"
import type { KubeError } from "../kube/KubeError.ts"
import {
  isTerminal,
  needsJournal,
  parseRecord,
  type RepairRecord,
  serializeRecord
} from "../repair/RepairRecord.ts"
import type { NodeCache } from "./NodeCache.ts"

export const JOURNAL_LABEL = "nodemend.io/repair-journal"
export const journalName = (nodeName: string) => `nodemend-repair-${nodeName}`.slice(0, 253)

export type StoredRecord =
  | { readonly _tag: "None" }
  | { readonly _tag: "Record"; readonly record: RepairRecord }
  | { readonly _tag: "Invalid"; readonly error: string }

export interface RepairStore {
  readonly get: (nodeName: string) => StoredRecord
  readonly loadJournal: Effect.Effect<void, KubeError>
  readonly persist: (r: RepairRecord) => Effect.Effect<void, KubeError>
  /** A record the caller has already written to the Node itself (in the same patch as the taint). */
  readonly remember: (r: RepairRecord) => void
  /** A succeeded repair: journal deleted, annotation removed, id remembered so a stale cache cannot replay it. */
  readonly finish: (r: RepairRecord) => Effect.Effect<void, KubeError>
  readonly journalNodeNames: () => ReadonlyArray<string>
  /** The repaired node whose replacement is `replacementName`. */
  readonly originalOf: (replacementName: string) => string | undefined
  readonly active: () => number
}

export const makeRepairStore = (kube: KubeShape, cache: NodeCache, namespace: string): RepairStore => {
  const memory = new Map<string, RepairRecord>()
  const journal = new Map<string, RepairRecord>()
  const finished = new Set<string>()
  const replacementOf = new Map<string, string>()

  const index = (r: RepairRecord) => {
    if (r.replacement?.nodeName !== undefined) replacementOf.set(r.replacement.nodeName, r.node.name)
  }

  const fromAnnotation = (nodeName: string): StoredRecord => {
    const node = cache.get(nodeName)
    const text = node?.metadata?.annotations?.[REPAIR_ANNOTATION]
    if (text === undefined) return { _tag: "None" }
    const r = parseRecord(text)
    if (Result.isFailure(r)) return { _tag: "Invalid", error: r.failure }
    if (
      r.success.node.uid !== undefined &&
      node?.metadata?.uid !== undefined &&
      r.success.node.uid !== node.metadata.uid
    )
      return { _tag: "None" }
    return { _tag: "Record", record: r.success }
  }

  const writeAnnotation = (r: RepairRecord, value: string | null) =>
    cache.get(r.node.name) === undefined
      ? Effect.void
      : kube.patchNodeAnnotations(r.node.name, { [REPAIR_ANNOTATION]: value }).pipe(
          Effect.asVoid,
          Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.void : Effect.fail(e)))
        )

  const writeJournal = (r: RepairRecord) =>
    kube.upsertConfigMap({
      metadata: { name: journalName(r.node.name), namespace, labels: { [JOURNAL_LABEL]: "true" } },
      data: { record: serializeRecord(r) }
    })

  return {
    get: (nodeName) => {
      const m = memory.get(nodeName)
      if (m !== undefined) return { _tag: "Record", record: m }
      const a = fromAnnotation(nodeName)
      if (a._tag === "Record" && finished.has(a.record.id)) return { _tag: "None" }
      if (a._tag !== "None") return a
      const j = journal.get(nodeName)
      if (j !== undefined && !finished.has(j.id)) return { _tag: "Record", record: j }
      return { _tag: "None" }
    },
    loadJournal: kube.listConfigMaps(namespace, `${JOURNAL_LABEL}=true`).pipe(
      Effect.flatMap((cms) =>
        Effect.forEach(cms, (cm) => {
          const r = parseRecord(cm.data?.record ?? "")
          if (Result.isFailure(r))
            return Effect.logWarning("ignoring invalid repair journal", {
              configMap: cm.metadata?.name,
              error: r.failure
            })
          journal.set(r.success.node.name, r.success)
          index(r.success)
          return Effect.void
        })
      ),
      Effect.asVoid
    ),
    persist: (r) =>
      Effect.gen(function* () {
        memory.set(r.node.name, r)
        index(r)
        if (needsJournal(r)) {
          yield* writeJournal(r)
          journal.set(r.node.name, r)
        }
        yield* writeAnnotation(r, serializeRecord(r))
      }),
    remember: (r) => {
      memory.set(r.node.name, r)
      index(r)
    },
    finish: (r) =>
      Effect.gen(function* () {
        finished.add(r.id)
        memory.delete(r.node.name)
        yield* kube.deleteConfigMap(namespace, journalName(r.node.name))
        journal.delete(r.node.name)
        if (r.replacement?.nodeName !== undefined) replacementOf.delete(r.replacement.nodeName)
        yield* writeAnnotation(r, null)
      }),
    journalNodeNames: () => [...journal.keys()],
    originalOf: (name) => replacementOf.get(name),
    active: () => [...memory.values()].filter((r) => !isTerminal(r)).length
  }
}
