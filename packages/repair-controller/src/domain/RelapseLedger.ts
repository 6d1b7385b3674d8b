/**
 * The relapse ledger of one pool and one reason: the repairs that ended there lately, the nodes that came up
 * with the same condition and reason after them (relapses), and the hold those relapses put on new repairs of
 * that reason in that pool. Kept in the controller's journal (one ConfigMap per pool and reason in its own
 * namespace, label `nodemend.io/relapse-ledger=true`), so a restarted controller keeps its holds. Times are
 * epoch milliseconds. `kubectl nodemend release <pool> <reason>` deletes the ConfigMap: the ledger starts over.
 */
import { Result, Schema } from "effect"

/** ConfigMap label (`"true"`) on the relapse ledgers in the controller's namespace. */
export const RELAPSE_LEDGER_LABEL = "nodemend.io/relapse-ledger"

const Ms = Schema.Finite

export const LedgerRepairSchema = Schema.Struct({
  id: Schema.String,
  node: Schema.String,
  action: Schema.Literals(["Replace", "Reboot"]),
  /** The replacement's Node name, when the owner said it. */
  replacement: Schema.optionalKey(Schema.String),
  /** The replacement's instance id, when the cloud said it (its Node is matched by providerID). */
  replacementInstance: Schema.optionalKey(Schema.String),
  startedAt: Ms,
  finishedAt: Ms
})
export type LedgerRepair = typeof LedgerRepairSchema.Type

export const RelapseSchema = Schema.Struct({
  /** The node that came up with the same condition and reason. */
  node: Schema.String,
  /** Which Node object it was: evidence only, a relapse counts once per node name (decide/relapse.ts). */
  uid: Schema.optionalKey(Schema.String),
  /** The repair it follows, and the node that repair was of. */
  repairId: Schema.String,
  repairedNode: Schema.String,
  /** `replacement`: the repair's own replacement; `fresh`: another node of the pool created after it started. */
  kind: Schema.Literals(["replacement", "fresh", "same-node"]),
  /** The condition's lastTransitionTime. */
  at: Ms,
  /** From the node's arrival (or the repair's end, when that is unknown) to the condition. */
  afterMs: Ms
})
export type Relapse = typeof RelapseSchema.Type

export const HoldSchema = Schema.Struct({
  since: Ms,
  /** The relapses that engaged it (the evidence), as they were then. */
  evidence: Schema.Array(RelapseSchema),
  threshold: Schema.Int,
  windowMs: Ms
})
export type Hold = typeof HoldSchema.Type

export const RelapseLedgerSchema = Schema.Struct({
  v: Schema.Literal(1),
  /** The pool (`<cluster>` for nodes without the pool label). */
  pool: Schema.String,
  reason: Schema.String,
  conditionType: Schema.String,
  repairs: Schema.Array(LedgerRepairSchema),
  relapses: Schema.Array(RelapseSchema),
  hold: Schema.optionalKey(HoldSchema)
})
export type RelapseLedger = typeof RelapseLedgerSchema.Type

const decodeJson = Schema.decodeUnknownResult(Schema.fromJsonString(RelapseLedgerSchema))

/** The first relapse of each node name: the count is of distinct names. */
export const onePerNode = (relapses: ReadonlyArray<Relapse>): ReadonlyArray<Relapse> => {
  const seen = new Set<string>()
  return relapses.filter((r) => {
    if (seen.has(r.node)) return false
    seen.add(r.node)
    return true
  })
}

/**
 * A ledger as read from the journal. Ledgers written before relapses counted per name (they counted per name and
 * uid) may hold a re-created Node twice: read back with one relapse per name, in the evidence too. A hold they
 * engaged stays (it lifts by its quiet period or a release): when in doubt, the controller does nothing.
 */
export const parseLedger = (text: string): Result.Result<RelapseLedger, string> => {
  const r = decodeJson(text)
  if (Result.isFailure(r)) return Result.fail(r.failure.message)
  const l = r.success
  return Result.succeed({
    ...l,
    relapses: onePerNode(l.relapses),
    ...(l.hold !== undefined ? { hold: { ...l.hold, evidence: onePerNode(l.hold.evidence) } } : {})
  })
}

export const serializeLedger = (l: RelapseLedger): string => JSON.stringify(l)

/** `pool/reason`: one ledger each. */
export const ledgerKey = (pool: string, reason: string): string => `${pool}/${reason}`

/** FNV-1a, 32 bits, hex: keeps two pool/reason pairs that sanitize alike apart. */
const fnv = (s: string): string => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(8, "0")
}

/** The ledger's ConfigMap name: readable, a valid DNS subdomain, unique per pool and reason. */
export const ledgerConfigMapName = (pool: string, reason: string): string => {
  const readable = `${pool === "<cluster>" ? "cluster" : pool}-${reason}`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 200)
  return `nodemend-relapse-${readable}-${fnv(ledgerKey(pool, reason))}`
}
