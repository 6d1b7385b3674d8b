/** The repair taint on the repair's own Node: added first, removed after a reboot that healed the node. */
import { Clock, Effect, Metric } from "effect"
import type { ActionEnv } from "./ActionEnv.ts"
import type { Taint } from "@nodemend/kube-access"
import * as M from "../observability/metrics.ts"
import { REPAIR_TAINT_EFFECT, REPAIR_TAINT_KEY } from "@nodemend/reason-codes"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { fact, nodeEvent, wait } from "./step.ts"

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

const setTaint = (env: ActionEnv, r: RepairRecord, present: boolean) =>
  Effect.gen(function* () {
    const node = yield* env.kube.readNode(r.node.name)
    const ops = taintPatch(
      {
        uid: r.node.uid,
        resourceVersion: node.metadata?.resourceVersion,
        ...(node.spec?.taints ? { taints: node.spec.taints } : {})
      },
      present
    )
    if (ops === undefined) return "unchanged" as const
    yield* env.kube.jsonPatchNode(r.node.name, [...ops])
    return "changed" as const
  })

export const taint = (env: ActionEnv, r: RepairRecord) =>
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
    const expiredAt = env.expiredAt.get(r.id)
    if (expiredAt !== undefined) {
      env.expiredAt.delete(r.id)
      yield* Metric.update(
        M.decisionLatency,
        Math.max(0, (yield* Clock.currentTimeMillis) - expiredAt) / 1000
      )
    }
    yield* nodeEvent(
      env,
      r,
      "Normal",
      "Tainted",
      `tainted ${REPAIR_TAINT_KEY}:${REPAIR_TAINT_EFFECT}; draining next`
    )
    return fact({ _tag: "Tainted" })
  })

export const untaint = (env: ActionEnv, r: RepairRecord) =>
  setTaint(env, r, false).pipe(
    Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.succeed("gone" as const) : Effect.fail(e))),
    Effect.as(fact({ _tag: "Untainted" }))
  )
