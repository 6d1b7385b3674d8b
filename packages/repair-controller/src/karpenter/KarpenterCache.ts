/**
 * NodeClaims and NodePools on the shared list+watch loop, when Karpenter's CRDs are installed (a 404 on the first
 * list: no Karpenter, nothing watched). Indexed by providerID (the join to a Node) and by NodePool. A NodeClaim
 * that changes wakes its Node (Karpenter started or stopped acting on it; a replacement registered); a NodePool
 * that changes wakes its nodes (veto, budgets). An object that does not decode is logged and skipped, never
 * guessed at.
 */
import { Duration, Effect, Fiber, Result } from "effect"
import { type KubeHttp, type ListWatchOptions, listOnce, listWatch } from "@nodemend/kube-access"
import { DO_NOT_REPAIR_ANNOTATION } from "@nodemend/reason-codes"
import type { NodePoolFacts } from "../domain/NodePool.ts"
import {
  decodeNodeClaim,
  decodeNodePool,
  NODECLAIMS_PATH,
  NODEPOOLS_PATH,
  type NodeClaim,
  type NodePool,
  poolOf
} from "./NodeClaims.ts"

export interface KarpenterCache {
  /** Whether Karpenter's CRDs were found at start. */
  readonly present: () => boolean
  readonly claimOf: (providerID: string | undefined) => NodeClaim | undefined
  readonly claim: (name: string) => NodeClaim | undefined
  readonly nodePool: (name: string) => NodePool | undefined
  /** The facts `decide` weighs for a pool that is a Karpenter NodePool; undefined for any other pool. */
  readonly poolFacts: (pool: string | undefined) => NodePoolFacts | undefined
  readonly start: () => Promise<void>
  readonly stop: () => Promise<void>
}

type Log = (level: "info" | "warn", msg: string, extra?: Record<string, unknown>) => void

/** One watched collection, by name; `onChange` gets the old and new object (either may be undefined). */
const collection = <A>(
  http: KubeHttp,
  path: string,
  decode: (u: unknown) => Result.Result<A, unknown>,
  nameOf: (a: A) => string,
  onChange: (before: A | undefined, after: A | undefined) => void,
  log: Log
) => {
  const items = new Map<string, A>()
  let listed = new Set<string>()
  const options: ListWatchOptions = {
    http,
    path,
    query: {},
    pageSize: 500,
    onListStart: () => {
      listed = new Set()
    },
    onObject: (type, object) => {
      const r = decode(object)
      if (Result.isFailure(r))
        return log("warn", `skipping an unreadable object from ${path}`, { error: String(r.failure) })
      const name = nameOf(r.success)
      const before = items.get(name)
      if (type === "DELETED") {
        items.delete(name)
        return onChange(before, undefined)
      }
      if (type === "LISTED") listed.add(name)
      items.set(name, r.success)
      onChange(before, r.success)
    },
    onSynced: () => {
      for (const [name, before] of [...items]) {
        if (listed.has(name)) continue
        items.delete(name)
        onChange(before, undefined)
      }
    },
    backoff: (end) => (end._tag === "Ended" || end._tag === "Expired" ? Duration.zero : Duration.seconds(2)),
    onFailure: (_end, pause, detail) =>
      Effect.sync(() =>
        log("warn", `${path} watch failed; again in ${Duration.toSeconds(pause)}s`, { error: detail })
      )
  }
  return { items, options }
}

export const makeKarpenterCache = (
  http: KubeHttp,
  wakeNode: (name: string) => void,
  wakePool: (pool: string) => void,
  log: Log
): KarpenterCache => {
  const byProviderID = new Map<string, string>()
  const claimsPerPool = new Map<string, number>()
  const countPool = (c: NodeClaim | undefined, sign: 1 | -1) => {
    const pool = c === undefined ? undefined : poolOf(c)
    if (pool !== undefined) claimsPerPool.set(pool, (claimsPerPool.get(pool) ?? 0) + sign)
  }
  const claims = collection(
    http,
    NODECLAIMS_PATH,
    decodeNodeClaim,
    (c) => c.metadata.name,
    (before, after) => {
      countPool(before, -1)
      countPool(after, 1)
      const was = before?.status?.providerID
      if (was !== undefined && byProviderID.get(was) === before?.metadata.name) byProviderID.delete(was)
      const id = after?.status?.providerID
      if (id !== undefined && id !== "" && after !== undefined) byProviderID.set(id, after.metadata.name)
      for (const node of new Set([before?.status?.nodeName, after?.status?.nodeName]))
        if (node !== undefined) wakeNode(node)
    },
    log
  )
  const pools = collection(
    http,
    NODEPOOLS_PATH,
    decodeNodePool,
    (p) => p.metadata.name,
    (before, after) => wakePool((after ?? before)?.metadata.name ?? ""),
    log
  )
  let present = false
  const loops: Array<Fiber.Fiber<never>> = []
  return {
    present: () => present,
    claimOf: (providerID) => {
      const name = providerID === undefined ? undefined : byProviderID.get(providerID)
      return name === undefined ? undefined : claims.items.get(name)
    },
    claim: (name) => claims.items.get(name),
    nodePool: (name) => pools.items.get(name),
    poolFacts: (pool) => {
      const p = pool === undefined ? undefined : pools.items.get(pool)
      if (p === undefined || pool === undefined) return undefined
      return {
        claims: claimsPerPool.get(pool) ?? 0,
        vetoed: p.metadata.annotations?.[DO_NOT_REPAIR_ANNOTATION] === "true",
        budgets: p.spec?.disruption?.budgets ?? []
      }
    },
    start: async () => {
      for (const c of [claims, pools]) {
        const rv = await Effect.runPromise(
          listOnce(c.options).pipe(
            Effect.map((v): string | undefined => v),
            Effect.catchTag("KubeError", (e) =>
              e.code === 404 || e.code === 403 ? Effect.succeed(`unreadable:${e.code}`) : Effect.fail(e)
            )
          )
        )
        if (rv === "unreadable:404") {
          log("info", "Karpenter's CRDs are not installed: no NodeClaims or NodePools to watch")
          return
        }
        // Fail closed: without NodeClaims a Karpenter node's instance says it is Karpenter's, and is refused.
        if (rv === "unreadable:403") {
          log(
            "warn",
            `not allowed to list ${c.options.path}: Karpenter nodes will be refused as of unknown owner`
          )
          return
        }
        loops.push(Effect.runFork(listWatch({ ...c.options, resourceVersion: rv })))
      }
      present = true
    },
    stop: async () => {
      for (const l of loops) await Effect.runPromise(Fiber.interrupt(l))
    }
  }
}
