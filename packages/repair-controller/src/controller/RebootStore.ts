/**
 * Where the reboots escalation reads live (domain/Reboots.ts, decide/escalation.ts): in memory, by node name, and in
 * one ConfigMap of the controller's namespace (`nodemend-reboots`), which only the controller writes (ADR 0009).
 * Journal first, memory after, as the relapse ledgers (RelapseStore.ts): read before any repair starts, so a
 * restarted controller still replaces a node whose fault came back after its reboot. A mark is written when a Reboot
 * repair ends well (rare: one write each, serialized) and dropped once older than the longest escalation window.
 * Unreadable contents are logged and replaced at the next write: a lost mark means a Reboot where a Replace was due,
 * the milder repair.
 */
import type { KubeError } from "@nodemend/kube-access"
import { Effect, Result, Semaphore } from "effect"
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import { longestWindowMs } from "../decide/escalation.ts"
import {
  parseReboots,
  REBOOTS_CONFIGMAP,
  type RebootMark,
  serializeReboots,
  withMark
} from "../domain/Reboots.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { KubeShape } from "../kube/Kube.ts"

/** About 200 bytes a mark: well under a ConfigMap's 1 MiB. */
export const MAX_REBOOT_MARKS = 3000

export interface RebootStore {
  readonly load: Effect.Effect<void, KubeError>
  /** The node's marks (one per condition type it was rebooted for). */
  readonly of: (node: string) => ReadonlyArray<RebootMark>
  /** A repair ended well: a Reboot is remembered for its node (one escalated within the repair ended a Replace). */
  readonly repaired: (r: RepairRecord, now: number) => Effect.Effect<void, KubeError>
}

export const makeRebootStore = (
  kube: KubeShape,
  config: ControllerConfig,
  log: (msg: string, extra: Record<string, unknown>) => Effect.Effect<void>
): RebootStore => {
  let marks: ReadonlyArray<RebootMark> = []
  let exists = false
  const lock = Semaphore.makeUnsafe(1)
  return {
    load: kube.readConfigMap(config.namespace, REBOOTS_CONFIGMAP).pipe(
      Effect.flatMap((cm) => {
        exists = true
        const r = parseReboots(cm.data?.reboots ?? "")
        if (Result.isSuccess(r))
          return Effect.sync(() => {
            marks = r.success
          })
        return log("unreadable reboots journal; ignored (replaced at the next reboot)", {
          configMap: REBOOTS_CONFIGMAP,
          error: r.failure
        })
      }),
      Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.void : Effect.fail(e)))
    ),
    of: (node) => marks.filter((m) => m.node === node),
    repaired: (r, now) => {
      if (r.action !== "Reboot") return Effect.void
      const mark: RebootMark = {
        node: r.node.name,
        providerID: r.node.providerID,
        uid: r.node.uid,
        conditionType: r.conditionType,
        reason: r.reason,
        repairId: r.id,
        at: r.finishedAt !== undefined ? Date.parse(r.finishedAt) : now
      }
      return lock.withPermits(1)(
        Effect.suspend(() => {
          const next = withMark(marks, mark, now, longestWindowMs(config), MAX_REBOOT_MARKS)
          return kube
            .upsertConfigMap(
              {
                metadata: { name: REBOOTS_CONFIGMAP, namespace: config.namespace },
                data: { reboots: serializeReboots(next) }
              },
              exists
            )
            .pipe(
              Effect.andThen(
                Effect.sync(() => {
                  exists = true
                  marks = next
                })
              )
            )
        })
      )
    }
  }
}
