/** The repair taint on the repair's own Node: added first, removed after a reboot that healed the node. */
import { Clock, Effect, Metric } from "effect"
import type { KubeError, Node, Taint } from "@nodemend/kube-access"
import * as M from "../observability/metrics.ts"
import { REPAIR_TAINT_EFFECT, REPAIR_TAINT_KEY } from "@nodemend/reason-codes"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { EventRecorder } from "../kube/EventRecorder.ts"
import type { KubeShape } from "../kube/Kube.ts"
import { type CachedNodes, nodeEvent } from "../kube/stepPorts.ts"
import { fact, wait } from "../repair/outcome.ts"
import type { TaintFirst } from "./TaintFirst.ts"

export interface TaintPorts {
  readonly kube: Pick<KubeShape, "readNode" | "jsonPatchNode">
  readonly cache: CachedNodes
  readonly events: EventRecorder
  /** Drains wait while taints are written (and briefly after). */
  readonly taintFirst: TaintFirst
}

/** One JSON patch that fails if the Node's uid or version moved: it never lands on another object. */
export const taintPatch = (
  node: {
    readonly uid: string
    readonly resourceVersion: string | undefined
    readonly taints?: ReadonlyArray<Taint>
  },
  present: boolean
): ReadonlyArray<object> | undefined => {
  const taints = node.taints ?? []
  const idx = taints.findIndex((t) => t.key === REPAIR_TAINT_KEY && t.effect === REPAIR_TAINT_EFFECT)
  if (present === idx >= 0) return undefined
  const taint: Taint = { key: REPAIR_TAINT_KEY, value: "true", effect: REPAIR_TAINT_EFFECT }
  const guard = [
    { op: "test", path: "/metadata/uid", value: node.uid },
    { op: "test", path: "/metadata/resourceVersion", value: node.resourceVersion }
  ]
  if (!present) return [...guard, { op: "remove", path: `/spec/taints/${idx}` }]
  if (node.taints !== undefined) return [...guard, { op: "add", path: "/spec/taints/-", value: taint }]
  return [...guard, { op: "add", path: "/spec/taints", value: [taint] }]
}

const isConflict = (e: KubeError) => e.code === 409 || e.code === 422

/**
 * Writes the taint with the guards of `taintPatch`. The first try goes from the informer's copy of the Node when it
 * is this repair's Node: no read on the way from toleration expiry to the taint (a wave of expiries otherwise waits
 * one more round trip each, issue #25). The resourceVersion guard makes a stale copy fail rather than land; then,
 * and whenever the copy would change nothing, the Node is read afresh, as every write did before.
 */
const setTaint = (env: TaintPorts, r: RepairRecord, present: boolean) =>
  Effect.gen(function* () {
    const opsFor = (node: Node) =>
      taintPatch(
        {
          uid: r.node.uid,
          resourceVersion: node.metadata?.resourceVersion,
          ...(node.spec?.taints ? { taints: node.spec.taints } : {})
        },
        present
      )
    const cached = env.cache.get(r.node.name)
    const fromCache =
      cached?.metadata?.uid === r.node.uid && cached.metadata.resourceVersion !== undefined
        ? opsFor(cached)
        : undefined
    if (fromCache !== undefined) {
      const first = yield* Effect.result(env.kube.jsonPatchNode(r.node.name, [...fromCache]))
      if (first._tag === "Success") return "changed" as const
      if (!isConflict(first.failure)) return yield* Effect.fail(first.failure)
    }
    const ops = opsFor(yield* env.kube.readNode(r.node.name))
    if (ops === undefined) return "unchanged" as const
    yield* env.kube.jsonPatchNode(r.node.name, [...ops])
    return "changed" as const
  })

export const taint = (env: TaintPorts, r: RepairRecord) =>
  Effect.gen(function* () {
    const changed = yield* env.taintFirst
      .tainting(setTaint(env, r, true))
      .pipe(
        Effect.catchTag("KubeError", (e) =>
          e.code === 404
            ? Effect.succeed("gone" as const)
            : e.code === 409 || e.code === 422
              ? Effect.succeed("conflict" as const)
              : Effect.fail(e)
        )
      )
    if (changed === "gone") return fact({ _tag: "Aborted", why: "node disappeared before it was tainted" })
    if (changed === "conflict") return wait(0)
    if (r.tolerationExpiredAt !== undefined) {
      const expiredAt = Date.parse(r.tolerationExpiredAt)
      yield* Metric.update(
        M.decisionLatency,
        Math.max(0, (yield* Clock.currentTimeMillis) - expiredAt) / 1000
      )
    }
    yield* nodeEvent(
      env.events,
      r,
      "Normal",
      "Tainted",
      `tainted ${REPAIR_TAINT_KEY}:${REPAIR_TAINT_EFFECT}; draining next`
    )
    return fact({ _tag: "Tainted" })
  })

export const untaint = (env: TaintPorts, r: RepairRecord) =>
  setTaint(env, r, false).pipe(
    Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.succeed("gone" as const) : Effect.fail(e))),
    Effect.as(fact({ _tag: "Untainted" }))
  )
