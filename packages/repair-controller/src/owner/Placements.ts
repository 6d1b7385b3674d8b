/**
 * The proven placement (pool and zone) of unhealthy nodes (domain/Placement.ts): asked of the owner proof
 * (ownership.ts: the cloud vouches for the machine, then the NodeClaim's NodePool or the instance's pool tag, and
 * the cloud's placement zone) as soon as a node is unhealthy, fixed for that Node (uid and providerID) once
 * answered, asked again only when those change. Where the owner names no pool or zone (an untagged instance; the
 * kwok provider, whose "cloud" is the Node), the label at the moment of the proof is fixed instead: a later
 * relabel moves nothing. A machine the cloud does not vouch for is `Unprovable`. A retryable failure is asked again
 * after `PLACEMENT_RETRY_MS`. At most `maxConcurrent` proofs are in flight; only unhealthy nodes are asked
 * (healthy ones count in a pool's size by label), so the cloud calls are bounded by the unhealthy nodes, once each.
 */
import { Clock, Effect, type Fiber, Semaphore } from "effect"
import { ZONE_LABEL } from "@nodemend/reason-codes"
import type { NodeView } from "../domain/NodeView.ts"
import type { Placement } from "../domain/Placement.ts"
import type { Ownership } from "./ownership.ts"

/** A retryable answer (throttling, a timeout) is asked again after this. */
export const PLACEMENT_RETRY_MS = 10_000

export interface Placements {
  /** The placement proven for this very Node (uid, providerID); `Pending` when not (yet). */
  readonly of: (node: NodeView) => Placement
  /** Asks for `node`'s placement in the background, unless it is proven or on its way for this very Node. */
  readonly ensure: (node: NodeView) => Effect.Effect<void>
  readonly forget: (name: string) => void
  readonly size: () => number
}

export interface PlacementPorts {
  readonly poolLabel: string
  /** The owner proof (Owners.prove), on the cloud's answer cached for the expiry's decision (PreProofs.ask). */
  readonly prove: (node: NodeView) => Effect.Effect<Ownership>
  /** Called when a node's placement was answered (proven or unprovable): count it again, decide it again. */
  readonly settled: (name: string) => void
  readonly maxConcurrent: number
}

interface Entry {
  readonly uid: string | undefined
  readonly providerID: string
  readonly state:
    | { readonly _tag: "Asking" }
    | { readonly _tag: "Retry"; readonly at: number }
    | { readonly _tag: "Known"; readonly placement: Placement }
}

const label = (labels: Readonly<Record<string, string>>, key: string) => {
  const v = labels[key]
  return v === undefined || v === "" ? undefined : v
}

/** The placement an owner proof gives; undefined: ask again (retryable). */
export const placementOf = (poolLabel: string, node: NodeView, owned: Ownership): Placement | undefined => {
  switch (owned._tag) {
    case "Retry":
      return undefined
    case "Refused":
      // The cloud vouched for the machine but names no owner: its facts still place it.
      return owned.facts !== undefined
        ? provenFrom(poolLabel, node, owned.facts)
        : { _tag: "Unprovable", why: owned.why }
    case "Owned":
    case "OwnerActing":
      return provenFrom(poolLabel, node, owned.facts)
  }
}

const provenFrom = (
  poolLabel: string,
  node: NodeView,
  facts: { readonly pool?: string | undefined; readonly zone?: string | undefined }
): Placement => ({
  _tag: "Proven",
  pool: facts.pool ?? label(node.labels, poolLabel),
  zone: facts.zone ?? label(node.labels, ZONE_LABEL)
})

/** Placements whose background proofs run on the calling fiber's context (its Clock: TestClock in tests). */
export const makePlacements = (ports: PlacementPorts): Effect.Effect<Placements> =>
  Effect.map(Effect.context<never>(), (context) => placementsOn(ports, Effect.runForkWith(context)))

export const placementsOn = (
  ports: PlacementPorts,
  runFork: (effect: Effect.Effect<void>) => Fiber.Fiber<void>
): Placements => {
  const entries = new Map<string, Entry>()
  const permits = Semaphore.makeUnsafe(ports.maxConcurrent)
  const mine = (
    e: Entry | undefined,
    node: { readonly uid?: string | undefined; readonly providerID?: string | undefined }
  ) => e !== undefined && e.uid === node.uid && e.providerID === (node.providerID ?? "")
  const answered = (node: NodeView, owned: Ownership) =>
    Effect.sync(() => {
      const e = entries.get(node.name)
      // Another Node under the name since: its own proof decides.
      if (!mine(e, node)) return
      const placement = placementOf(ports.poolLabel, node, owned)
      return placement
    }).pipe(
      Effect.flatMap((placement) =>
        placement === undefined
          ? Effect.map(Clock.currentTimeMillis, (now) => {
              if (mine(entries.get(node.name), node))
                entries.set(node.name, {
                  uid: node.uid,
                  providerID: node.providerID ?? "",
                  state: { _tag: "Retry", at: now + PLACEMENT_RETRY_MS }
                })
            })
          : Effect.sync(() => {
              if (!mine(entries.get(node.name), node)) return
              entries.set(node.name, {
                uid: node.uid,
                providerID: node.providerID ?? "",
                state: { _tag: "Known", placement }
              })
              ports.settled(node.name)
            })
      )
    )
  return {
    of: (node) => {
      const e = entries.get(node.name)
      return mine(e, node) && e!.state._tag === "Known" ? e!.state.placement : { _tag: "Pending" }
    },
    ensure: (node) =>
      Effect.gen(function* () {
        if (node.uid === undefined) return
        const e = entries.get(node.name)
        if (mine(e, node)) {
          if (e!.state._tag !== "Retry") return
          if ((yield* Clock.currentTimeMillis) < e!.state.at) return
        }
        entries.set(node.name, {
          uid: node.uid,
          providerID: node.providerID ?? "",
          state: { _tag: "Asking" }
        })
        runFork(
          permits
            .withPermits(1)(ports.prove(node))
            .pipe(
              Effect.catchCause((cause) =>
                Effect.succeed<Ownership>({ _tag: "Retry", error: String(cause) })
              ),
              Effect.flatMap((owned) => answered(node, owned))
            )
        )
      }),
    forget: (name) => {
      entries.delete(name)
    },
    size: () => entries.size
  }
}
