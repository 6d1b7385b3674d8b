/**
 * Where the controller's first sights of unhealthy statuses live (domain/Sightings.ts): in memory, keyed by node, and
 * in one ConfigMap of the controller's namespace so a restart keeps them. Only statuses a policy matches are kept
 * (unhealthy nodes only), and a node's entries go when its conditions clear or the node goes: the journal stays small.
 * A new sighting is written with every other one of the next FLUSH_MS (one write for a storm of failures, not one
 * each); a crash before that write costs a sighting, which is then taken again after the restart: later, never
 * sooner (the safe side). Unreadable contents are logged and ignored: every status is then first seen at the load.
 */
import type { KubeError } from "@nodemend/kube-access"
import { Effect, Result } from "effect"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { ConditionView, NodeView } from "../domain/NodeView.ts"
import {
  parseSightings,
  SIGHTINGS_CONFIGMAP,
  type Sighting,
  serializeSightings
} from "../domain/Sightings.ts"
import type { KubeShape } from "../kube/Kube.ts"
import { makeDirtyFlag } from "./DirtyFlag.ts"

/** How long new sightings wait to be written together. */
export const FLUSH_MS = 1_000
/** Under a ConfigMap's 1 MiB, with room for its metadata: about 6,000 sightings. */
export const MAX_JOURNAL_BYTES = 900_000

export interface SightingStore {
  /** Reads the journal; entries of nodes no longer there (`uidOf`: the live Node's uid) are dropped. */
  readonly load: (now: number, uidOf: (name: string) => string | undefined) => Effect.Effect<void, KubeError>
  /** The node with each policy-matching condition's first sight (`firstSeen`), taking it now where it is new. */
  readonly see: (node: NodeView, now: number) => NodeView
  /** The node is gone: its sightings too. */
  readonly forget: (name: string) => void
  /** Writes the sightings if any changed since the last write. */
  readonly flush: Effect.Effect<void, KubeError>
  /** Flushes every FLUSH_MS for as long as it runs; a failed write is logged and tried again. */
  readonly writer: Effect.Effect<never>
}

type NodeSightings = { readonly uid: string; readonly conditions: ReadonlyArray<Sighting> }

export const makeSightingStore = (
  kube: KubeShape,
  config: ControllerConfig,
  log: (msg: string, extra: Record<string, unknown>) => Effect.Effect<void>
): SightingStore => {
  const byNode = new Map<string, NodeSightings>()
  const dirty = makeDirtyFlag()
  let exists = false
  const tracked = (c: ConditionView) =>
    c.lastTransitionTime !== undefined &&
    config.policies.some((p) => p.conditionType === c.type && p.status === c.status)

  const flush = Effect.suspend(() => {
    if (!dirty.take()) return Effect.void
    const { text, left } = serializeSightings(
      [...byNode.values()].flatMap((n) => n.conditions),
      MAX_JOURNAL_BYTES
    )
    return kube
      .upsertConfigMap(
        { metadata: { name: SIGHTINGS_CONFIGMAP, namespace: config.namespace }, data: { sightings: text } },
        exists
      )
      .pipe(
        Effect.tap(() => Effect.sync(() => (exists = true))),
        Effect.tapError(() => Effect.sync(dirty.set)),
        Effect.andThen(
          left > 0
            ? log("too many sightings for one ConfigMap; the latest are kept in memory only", { left })
            : Effect.void
        )
      )
  })

  const loadAll = (text: string, now: number, uidOf: (name: string) => string | undefined) =>
    Effect.gen(function* () {
      const r = parseSightings(text)
      // Rewritten at the next flush: the bad contents are not read again.
      dirty.set()
      if (Result.isFailure(r))
        return yield* log("unreadable sightings journal; every unhealthy status is first seen now", {
          configMap: SIGHTINGS_CONFIGMAP,
          error: r.failure
        })
      for (const s of r.success) {
        if (uidOf(s.node) !== s.uid) continue
        // A sight after the load (another replica's clock ahead) is taken as the load: never later than now.
        const kept = { ...s, seen: Math.min(s.seen, now) }
        const known = byNode.get(s.node)
        byNode.set(s.node, {
          uid: s.uid,
          conditions: [...(known?.conditions ?? []).filter((c) => c.type !== s.type), kept]
        })
      }
    })

  return {
    load: (now, uidOf) =>
      kube.readConfigMap(config.namespace, SIGHTINGS_CONFIGMAP).pipe(
        Effect.flatMap((cm) =>
          Effect.suspend(() => {
            exists = true
            return loadAll(cm.data?.sightings ?? "", now, uidOf)
          })
        ),
        Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.void : Effect.fail(e)))
      ),
    see: (node, now) => {
      const known = byNode.get(node.name)
      const before = known !== undefined && known.uid === node.uid ? known.conditions : []
      const next: Sighting[] = []
      for (const c of node.conditions) {
        // A type written twice counts once, as matchPolicies reads it (its first).
        if (!tracked(c) || next.some((s) => s.type === c.type)) continue
        const was = before.find((s) => s.type === c.type)
        const same = was !== undefined && was.status === c.status && was.transition === c.lastTransitionTime
        next.push(
          same
            ? was
            : {
                node: node.name,
                uid: node.uid ?? "",
                type: c.type,
                status: c.status,
                transition: c.lastTransitionTime!,
                seen: now
              }
        )
      }
      const changed =
        next.length !== before.length ||
        next.some((s, i) => s !== before[i]) ||
        (known !== undefined && known.uid !== node.uid)
      if (changed) {
        dirty.set()
        if (next.length === 0) byNode.delete(node.name)
        else byNode.set(node.name, { uid: node.uid ?? "", conditions: next })
      }
      if (next.length === 0) return node
      return {
        ...node,
        conditions: node.conditions.map((c) => {
          const s = next.find((x) => x.type === c.type)
          return s !== undefined && s.status === c.status && s.transition === c.lastTransitionTime
            ? { ...c, firstSeen: s.seen }
            : c
        })
      }
    },
    forget: (name) => {
      if (byNode.delete(name)) dirty.set()
    },
    flush,
    writer: Effect.forever(
      dirty.whenSet.pipe(
        Effect.andThen(Effect.sleep(FLUSH_MS)),
        Effect.andThen(flush),
        Effect.catch((e) => log("could not write the sightings journal; trying again", { error: e.message }))
      )
    )
  }
}
