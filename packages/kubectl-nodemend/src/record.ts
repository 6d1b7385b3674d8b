/**
 * `kubectl nodemend record -o history.jsonl`: list and watch Nodes and write every change of the agent's condition
 * types (and Ready), with the node's pool and zone, in the what-if history format (docs/operations.md, "What-if
 * replay"), until interrupted or `--for` has passed; where Karpenter's CRDs are installed, its NodePools' facts too
 * (NodeClaims per NodePool, the do-not-repair annotation, disruption budgets), as the controller weighs them.
 * `makeRecorder` and `makePoolRecorder` are pure: API objects in, history lines out.
 */
import { closeSync, openSync, writeSync } from "node:fs"
import { type KubeHttp, listWatch, NODES_PATH, type Node } from "@nodemend/kube-access"
import { CONDITION_TYPES, DO_NOT_REPAIR_ANNOTATION, ZONE_LABEL } from "@nodemend/reason-codes"
import { type HistoryLine, historyLine, isoTime } from "@nodemend/repair-controller/whatif"
import { Effect } from "effect"

const KARPENTER_API = "/apis/karpenter.sh/v1"

/** The condition types recorded: the agent's and Ready. */
export const RECORDED_TYPES: ReadonlyArray<string> = ["Ready", ...CONDITION_TYPES]

interface Known {
  pool: string | undefined
  zone: string | undefined
  doNotRepair: boolean
  readonly conditions: Map<string, { status: string; reason: string }>
}

export interface Recorder {
  /** The lines an observed Node (listed, added or modified) adds to the history. */
  readonly observe: (node: Node, now: number) => ReadonlyArray<HistoryLine>
  readonly deleted: (name: string, now: number) => ReadonlyArray<HistoryLine>
  /** After a (re)list: the nodes not listed are gone. */
  readonly relisted: (listed: ReadonlySet<string>, now: number) => ReadonlyArray<HistoryLine>
}

const parseTime = (s: string | undefined): number | undefined => {
  if (s === undefined) return undefined
  const ms = Date.parse(s)
  return Number.isFinite(ms) ? ms : undefined
}

export const makeRecorder = (poolLabels: ReadonlyArray<string>): Recorder => {
  const known = new Map<string, Known>()
  const deleted = (name: string, now: number): ReadonlyArray<HistoryLine> =>
    known.delete(name) ? [{ v: 1, kind: "deleted", at: isoTime(now), node: name }] : []
  return {
    observe: (node, now) => {
      const name = node.metadata?.name
      if (name === undefined || name === "") return []
      const labels = node.metadata?.labels ?? {}
      const pool = poolLabels.map((l) => labels[l]).find((v) => v !== undefined && v !== "")
      const zone = labels[ZONE_LABEL] || undefined
      const doNotRepair = node.metadata?.annotations?.[DO_NOT_REPAIR_ANNOTATION] === "true"
      const out: HistoryLine[] = []
      let k = known.get(name)
      if (k === undefined || k.pool !== pool || k.zone !== zone || k.doNotRepair !== doNotRepair) {
        out.push({
          v: 1,
          kind: "node",
          at: isoTime(now),
          node: name,
          ...(pool !== undefined ? { pool } : {}),
          ...(zone !== undefined ? { zone } : {}),
          ...(doNotRepair ? { doNotRepair } : {})
        })
        k = { pool, zone, doNotRepair, conditions: k?.conditions ?? new Map() }
        known.set(name, k)
      }
      for (const c of node.status?.conditions ?? []) {
        if (!RECORDED_TYPES.includes(c.type)) continue
        const was = k.conditions.get(c.type)
        const reason = c.reason ?? ""
        if (was !== undefined && was.status === c.status && was.reason === reason) continue
        if (c.status !== "True" && c.status !== "False" && c.status !== "Unknown") continue
        k.conditions.set(c.type, { status: c.status, reason })
        // A new status counts from its lastTransitionTime (the toleration does); a new reason alone from now.
        const at =
          was === undefined || was.status !== c.status ? (parseTime(c.lastTransitionTime) ?? now) : now
        out.push({
          v: 1,
          kind: "condition",
          at: isoTime(at),
          node: name,
          ...(pool !== undefined ? { pool } : {}),
          ...(zone !== undefined ? { zone } : {}),
          type: c.type,
          status: c.status,
          ...(c.reason !== undefined ? { reason: c.reason } : {}),
          ...(c.message !== undefined ? { message: c.message } : {})
        })
      }
      return out
    },
    deleted,
    relisted: (listed, now) => [...known.keys()].filter((n) => !listed.has(n)).flatMap((n) => deleted(n, now))
  }
}

interface PoolFacts {
  readonly claims: number
  readonly doNotRepair: boolean
  readonly budgets: ReadonlyArray<{ nodes: string; reasons?: string[]; schedule?: string; duration?: string }>
}

interface KarpenterObject {
  readonly metadata?: {
    readonly name?: string
    readonly labels?: Record<string, string>
    readonly annotations?: Record<string, string>
  }
  readonly spec?: { readonly disruption?: { readonly budgets?: ReadonlyArray<Record<string, unknown>> } }
}

export const KARPENTER_NODEPOOL_LABEL = "karpenter.sh/nodepool"

const budgetsOf = (np: KarpenterObject): PoolFacts["budgets"] =>
  (np.spec?.disruption?.budgets ?? []).flatMap((b) =>
    typeof b.nodes === "string"
      ? [
          {
            nodes: b.nodes,
            ...(Array.isArray(b.reasons) ? { reasons: b.reasons.map(String) } : {}),
            ...(typeof b.schedule === "string" ? { schedule: b.schedule } : {}),
            ...(typeof b.duration === "string" ? { duration: b.duration } : {})
          }
        ]
      : []
  )

export interface PoolRecorder {
  readonly nodePool: (np: KarpenterObject, now: number) => ReadonlyArray<HistoryLine>
  readonly nodePoolDeleted: (name: string, now: number) => ReadonlyArray<HistoryLine>
  readonly nodeClaim: (claim: KarpenterObject, now: number) => ReadonlyArray<HistoryLine>
  readonly nodeClaimDeleted: (name: string, now: number) => ReadonlyArray<HistoryLine>
}

/**
 * Karpenter NodePools' facts as the controller's KarpenterCache gives them to `decide`: a `nodepool` line whenever
 * one of them changes (NodeClaims counted per `karpenter.sh/nodepool` label, registered or not).
 */
export const makePoolRecorder = (): PoolRecorder => {
  const pools = new Map<string, { doNotRepair: boolean; budgets: PoolFacts["budgets"] }>()
  const claimPool = new Map<string, string>()
  const written = new Map<string, string>()
  const claimsOf = (pool: string) => [...claimPool.values()].filter((p) => p === pool).length
  const emit = (pool: string, now: number): ReadonlyArray<HistoryLine> => {
    const p = pools.get(pool)
    if (p === undefined) return []
    const line: HistoryLine = {
      v: 1,
      kind: "nodepool",
      at: isoTime(now),
      pool,
      claims: claimsOf(pool),
      ...(p.doNotRepair ? { doNotRepair: true } : {}),
      ...(p.budgets.length > 0 ? { budgets: p.budgets } : {})
    }
    const { at: _at, ...facts } = line
    const key = JSON.stringify(facts)
    if (written.get(pool) === key) return []
    written.set(pool, key)
    return [line]
  }
  return {
    nodePool: (np, now) => {
      const name = np.metadata?.name
      if (name === undefined || name === "") return []
      pools.set(name, {
        doNotRepair: np.metadata?.annotations?.[DO_NOT_REPAIR_ANNOTATION] === "true",
        budgets: budgetsOf(np)
      })
      return emit(name, now)
    },
    nodePoolDeleted: (name, now) => {
      if (!pools.delete(name)) return []
      written.delete(name)
      return [{ v: 1, kind: "nodepool", at: isoTime(now), pool: name, claims: 0, deleted: true }]
    },
    nodeClaim: (claim, now) => {
      const name = claim.metadata?.name
      const pool = claim.metadata?.labels?.[KARPENTER_NODEPOOL_LABEL]
      if (name === undefined || pool === undefined) return []
      const before = claimPool.get(name)
      claimPool.set(name, pool)
      return before === pool ? [] : [...(before !== undefined ? emit(before, now) : []), ...emit(pool, now)]
    },
    nodeClaimDeleted: (name, now) => {
      const pool = claimPool.get(name)
      if (pool === undefined) return []
      claimPool.delete(name)
      return emit(pool, now)
    }
  }
}

export interface RecordOptions {
  /** The history file; undefined: standard output. */
  readonly out: string | undefined
  readonly poolLabels: ReadonlyArray<string>
  readonly selector: string | undefined
  /** Stop after this long; undefined: until interrupted (SIGINT, SIGTERM). */
  readonly forMs: number | undefined
  /** Stop when this settles, too (tests). */
  readonly until?: Promise<unknown>
}

/** Records until `--for` has passed or a signal comes; the file ends with an `end` mark either way. */
export const recordCommand = async (
  kube: KubeHttp,
  opts: RecordOptions,
  io: { readonly out: (t: string) => void; readonly err: (t: string) => void }
): Promise<number> => {
  const fd = opts.out !== undefined ? openSync(opts.out, "w") : undefined
  let lines = 0
  const write = (ls: ReadonlyArray<HistoryLine>) => {
    for (const l of ls) {
      lines++
      if (fd !== undefined) writeSync(fd, `${historyLine(l)}\n`)
      else io.out(historyLine(l))
    }
  }
  const recorder = makeRecorder(opts.poolLabels)
  const listed = new Set<string>()
  write([
    {
      v: 1,
      kind: "mark",
      at: isoTime(Date.now()),
      mark: "start",
      note: `kubectl nodemend record; pool labels ${opts.poolLabels.join(",")}${opts.selector ? `; selector ${opts.selector}` : ""}`
    }
  ])
  const watch = listWatch({
    http: kube,
    path: NODES_PATH,
    query: opts.selector ? { labelSelector: opts.selector } : {},
    onListStart: () => listed.clear(),
    onSynced: () => write(recorder.relisted(listed, Date.now())),
    onObject: (type, object) => {
      const node = object as Node
      const name = node.metadata?.name
      if (type === "DELETED") {
        if (name !== undefined) write(recorder.deleted(name, Date.now()))
        return
      }
      if (type === "LISTED" && name !== undefined) listed.add(name)
      write(recorder.observe(node, Date.now()))
    },
    onFailure: (end, _pause, detail) =>
      Effect.sync(() => io.err(`watch of nodes ended (${end._tag}${detail ? `: ${detail}` : ""}); resuming`))
  })
  let done = () => {}
  // Karpenter's NodePools and NodeClaims, where its CRDs are installed (a 404: no Karpenter, nothing watched).
  const pools = makePoolRecorder()
  const karpenterWatch = (path: string, kind: "pool" | "claim") =>
    listWatch({
      http: kube,
      path,
      query: {},
      onObject: (type, object) => {
        const o = object as KarpenterObject
        const name = o.metadata?.name ?? ""
        const now = Date.now()
        if (kind === "pool")
          write(type === "DELETED" ? pools.nodePoolDeleted(name, now) : pools.nodePool(o, now))
        else write(type === "DELETED" ? pools.nodeClaimDeleted(name, now) : pools.nodeClaim(o, now))
      }
    })
  const karpenter = await Effect.runPromise(
    kube.call("find Karpenter's NodePools", "GET", `${KARPENTER_API}/nodepools?limit=1`).pipe(
      Effect.as(true),
      Effect.catch(() => Effect.succeed(false))
    )
  )
  if (!karpenter) io.err("no Karpenter NodePools readable here: recording Nodes only")
  const stop = new Promise<void>((resolve) => {
    done = () => resolve()
  })
  process.once("SIGINT", done)
  process.once("SIGTERM", done)
  const timer = opts.forMs !== undefined ? setTimeout(done, opts.forMs) : undefined
  opts.until?.then(done, done)
  const controller = new AbortController()
  const running = Effect.runPromise(
    karpenter
      ? Effect.all(
          [
            watch,
            karpenterWatch(`${KARPENTER_API}/nodepools`, "pool"),
            karpenterWatch(`${KARPENTER_API}/nodeclaims`, "claim")
          ],
          {
            concurrency: "unbounded"
          }
        )
      : watch,
    { signal: controller.signal }
  ).catch(() => undefined)
  await stop
  process.off("SIGINT", done)
  process.off("SIGTERM", done)
  if (timer !== undefined) clearTimeout(timer)
  controller.abort()
  await running
  write([{ v: 1, kind: "mark", at: isoTime(Date.now()), mark: "end" }])
  if (fd !== undefined) closeSync(fd)
  io.err(`recorded ${lines} lines${opts.out !== undefined ? ` to ${opts.out}` : ""}`)
  return 0
}
