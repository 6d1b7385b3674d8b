/**
 * Repairs as the repair controller records them: its journal, one ConfigMap `nodemend-repair-<node>` per repair
 * in the controller's namespace (label `nodemend.io/repair-journal=true`, the record as JSON under
 * `data.record`). Only the controller writes there; nothing on the Node is read as repair state, since a node
 * can write its own annotations (ADR 0009). Records are decoded with the controller's own parser. Pure.
 */
import type { ConfigMap, Node } from "@nodemend/kube-access"
import { parseRecord } from "@nodemend/repair-controller"
import { Result } from "effect"

const JOURNAL_PREFIX = "nodemend-repair-"
export const journalName = (nodeName: string): string => `${JOURNAL_PREFIX}${nodeName}`.slice(0, 253)

/** The controller's namespace in deploy/controller (the chart's default release namespace). */
export const DEFAULT_CONTROLLER_NAMESPACE = "nodemend-system"

export interface RepairSummary {
  readonly phase: string
  /** The repair's id (unique per repair); absent for an unreadable entry. */
  readonly id?: string
  /** The pool the controller counted the node in when the repair started (its `poolLabel`), when it had one. */
  readonly pool?: string
  readonly action?: string
  readonly reason?: string
  readonly startedAt?: string
  readonly finishedAt?: string
  readonly failure?: string
}

interface Entry {
  readonly summary: RepairSummary
  /** The Node object the repair is bound to; absent for an unreadable entry. */
  readonly uid?: string
}

/** Journal entries by node name. */
export type RepairJournal = ReadonlyMap<string, Entry>

export const journalOf = (configMaps: ReadonlyArray<ConfigMap>): RepairJournal => {
  const out = new Map<string, Entry>()
  for (const cm of configMaps) {
    const name = cm.metadata?.name ?? ""
    if (!name.startsWith(JOURNAL_PREFIX)) continue
    const r = parseRecord(cm.data?.record ?? "")
    if (Result.isFailure(r)) {
      // The controller leaves such a node alone and says so; so does the plugin.
      out.set(name.slice(JOURNAL_PREFIX.length), { summary: { phase: "Unreadable" } })
      continue
    }
    const record = r.success
    // A record under another node's name is ignored, as the controller ignores it.
    if (journalName(record.node.name) !== name) continue
    const { id, phase, action, reason, startedAt, finishedAt, failure } = record
    out.set(record.node.name, {
      uid: record.node.uid,
      summary: {
        id,
        ...(record.node.pool !== undefined ? { pool: record.node.pool } : {}),
        phase,
        action,
        reason,
        startedAt,
        ...(finishedAt !== undefined ? { finishedAt } : {}),
        ...(failure !== undefined ? { failure } : {})
      }
    })
  }
  return out
}

/** Every entry: node name, the Node object's uid it is bound to (when readable), and its summary. */
export const journalEntries = (
  journal: RepairJournal
): ReadonlyArray<{ readonly node: string; readonly uid?: string; readonly summary: RepairSummary }> =>
  [...journal.entries()].map(([node, e]) => ({ node, ...e }))

/** The node's repair, when the journal has one for this Node object (not an earlier Node of the same name). */
export const repairOf = (node: Node, journal: RepairJournal): RepairSummary | undefined => {
  const entry = journal.get(node.metadata?.name ?? "")
  if (entry === undefined) return undefined
  return entry.uid === undefined || entry.uid === node.metadata?.uid ? entry.summary : undefined
}
