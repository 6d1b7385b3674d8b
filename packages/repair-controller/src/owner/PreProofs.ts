/**
 * The cloud's check of a node's machine, made shortly before its toleration expires (issue #25), so the decision
 * does not wait a cloud round trip (kwok: a Node GET; AWS: DescribeInstances) before the record and the taint.
 * Only the cloud's answer is kept, never a verdict: at the decision the owner verdict is computed afresh from it
 * (the NodeClaim then, Karpenter's presence then) and checked against the node's labels then, as an answer
 * fetched at the decision would be (startRepair.ts, ownership.ts).
 *
 * An answer is used only for the very Node it was asked for and only while it is fresh: the decision's Node and
 * the informer's latest copy of it must both still carry the uid, providerID, pool label and zone label the
 * answer was asked under (another object under the same name, another machine, or a relabelled node: asked
 * again), and the request must have started at most `PRE_PROOF_FRESH_MS` before the decision. A failed answer is
 * never kept: the decision asks again and reports what it gets. Each answer is used once.
 *
 * It is also the one cache of the cloud's answers: the placement proof made when a node turns unhealthy
 * (Placements.ts) asks through `ask`, so a node whose toleration is shorter than the freshness bound is asked
 * about once, not at the onset and again before the expiry.
 */
import { ZONE_LABEL } from "@nodemend/reason-codes"
import { Clock, Deferred, Effect, type Fiber } from "effect"
import type { InstanceFacts } from "../domain/Instance.ts"
import type { NodeView } from "../domain/NodeView.ts"

/** How long before the expiry the cloud is asked: several round trips even on a loaded API server or cloud. */
export const PRE_PROOF_LEAD_MS = 5_000
/** The oldest answer a decision uses, from the moment its request was sent. */
export const PRE_PROOF_FRESH_MS = 30_000

/** What an answer rests on that can change on the Kubernetes side. */
export interface ProofBasis {
  readonly uid: string | undefined
  readonly providerID: string
  readonly pool: string | undefined
  readonly zone: string | undefined
}

export const basisOf = (
  poolLabel: string,
  n: {
    readonly uid?: string | undefined
    readonly providerID?: string | undefined
    readonly labels?: Readonly<Record<string, string>> | undefined
  }
): ProofBasis => ({
  uid: n.uid,
  providerID: n.providerID ?? "",
  pool: n.labels?.[poolLabel],
  zone: n.labels?.[ZONE_LABEL]
})

const sameBasis = (a: ProofBasis, b: ProofBasis) =>
  a.uid === b.uid && a.providerID === b.providerID && a.pool === b.pool && a.zone === b.zone

export interface PreProofs {
  /**
   * Asks the cloud about `node` now, in the background, unless an answer for this very Node is fresh or on its way.
   * Returns at once.
   */
  readonly prepare: (node: NodeView) => Effect.Effect<void>
  /**
   * The cloud's facts for `node`: from an answer for this very Node that is fresh now (waiting for one on its
   * way), else asked now. The answer stays for a later `take`. Undefined when the cloud did not vouch for the
   * machine or failed: the caller asks itself to learn why.
   */
  readonly ask: (node: NodeView) => Effect.Effect<InstanceFacts | undefined>
  /**
   * The cloud's facts for `node` from an answer asked for this very Node at most `PRE_PROOF_FRESH_MS` ago (waiting
   * for one on its way), taken out; undefined when there is none: the caller asks the cloud itself.
   */
  readonly take: (node: NodeView) => Effect.Effect<InstanceFacts | undefined>
  /** Drops the answer for `name` (the node recovered, went, or is held back). */
  readonly forget: (name: string) => void
  readonly size: () => number
}

interface Entry {
  readonly basis: ProofBasis
  /** When the request was sent (Clock ms). */
  readonly askedAt: number
  /** Resolves with the facts, or undefined when the cloud did not vouch for the machine. */
  readonly answer: Deferred.Deferred<InstanceFacts | undefined>
}

export interface PreProofPorts {
  readonly poolLabel: string
  /** The cloud's check of the machine behind a Node (CloudProvider.inspect). */
  readonly inspect: (node: NodeView) => Effect.Effect<InstanceFacts, unknown>
  /** The informer's latest copy of the Node, as a basis; undefined when it has none. */
  readonly live: (name: string) => ProofBasis | undefined
}

/** Pre-proofs whose background requests run on the calling fiber's context (its Clock: TestClock in tests). */
export const makePreProofs = (ports: PreProofPorts): Effect.Effect<PreProofs> =>
  Effect.map(Effect.context<never>(), (context) => preProofsOn(ports, Effect.runForkWith(context)))

export const preProofsOn = (
  ports: PreProofPorts,
  runFork: (effect: Effect.Effect<void>) => Fiber.Fiber<void>
): PreProofs => {
  const entries = new Map<string, Entry>()
  const fresh = (e: Entry, now: number) => now - e.askedAt <= PRE_PROOF_FRESH_MS
  /** The entry for this very Node that is still fresh `aheadMs` from now, else a request sent now. */
  const request = (node: NodeView, aheadMs: number) =>
    Effect.gen(function* () {
      const basis = basisOf(ports.poolLabel, node)
      const now = yield* Clock.currentTimeMillis
      const had = entries.get(node.name)
      // Kept while it may still serve: fresh, and of this Node. (A done failure is undefined: kept too, so a
      // flapping cloud is not asked again and again before the decision, which asks itself.)
      if (had !== undefined && sameBasis(had.basis, basis) && fresh(had, now + aheadMs)) return had
      const answer = yield* Deferred.make<InstanceFacts | undefined>()
      const entry: Entry = { basis, askedAt: now, answer }
      entries.set(node.name, entry)
      runFork(
        ports.inspect(node).pipe(
          Effect.map((facts): InstanceFacts | undefined => facts),
          Effect.catchCause(() => Effect.succeed(undefined)),
          Effect.flatMap((facts) => Deferred.succeed(answer, facts)),
          Effect.onInterrupt(() => Deferred.succeed(answer, undefined)),
          Effect.asVoid
        )
      )
      return entry
    })
  return {
    prepare: (node) =>
      node.uid === undefined ? Effect.void : Effect.asVoid(request(node, PRE_PROOF_LEAD_MS)),
    ask: (node) =>
      node.uid === undefined
        ? Effect.succeed(undefined)
        : Effect.flatMap(request(node, 0), (e) => Deferred.await(e.answer)),
    take: (node) =>
      Effect.gen(function* () {
        const e = entries.get(node.name)
        if (e === undefined) return undefined
        entries.delete(node.name)
        const basis = basisOf(ports.poolLabel, node)
        if (!sameBasis(e.basis, basis)) return undefined
        const facts = yield* Deferred.await(e.answer)
        if (facts === undefined) return undefined
        if (!fresh(e, yield* Clock.currentTimeMillis)) return undefined
        // The informer's latest copy, after the wait: the decision's view can lag a re-created Node's uid.
        const live = ports.live(node.name)
        if (live === undefined || !sameBasis(e.basis, live)) return undefined
        return facts
      }),
    forget: (name) => {
      entries.delete(name)
    },
    size: () => entries.size
  }
}
