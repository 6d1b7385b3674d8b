/**
 * The first sub-reconciler: a node with a repair in the journal. An unreadable entry is an Event and nothing more;
 * a failed repair is kept for an operator (`kubectl nodemend retry|abandon` deletes it) and looked at again every
 * FAILED_RECHECK_MS, so its pool's slot is freed and the node decided afresh within that; a repair in flight is
 * carried on (its node's requests following it first). Only a node with no entry, or a cleared one, goes on.
 */
import { Effect } from "effect"
import type { KubeError } from "@nodemend/kube-access"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { isTerminal } from "../domain/RepairRecord.ts"
import { EVENT_DEDUPE_MS } from "../kube/EventRecorder.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"
import type { NodeReconcile, Verdict } from "./nodeReconcile.ts"

/** How often a failed repair's journal entry is read to see whether an operator has cleared it. */
export const FAILED_RECHECK_MS = 10_000

export type JournalPorts<E> = Pick<ControllerEnv, "store" | "events" | "cache" | "queue"> & {
  /** Carries the repair in flight on (runRepair.ts), the node's open requests following it first. */
  readonly resume: (record: RepairRecord) => Effect.Effect<void, E>
}

export const reconcileJournaled =
  <E>(ports: JournalPorts<E>) =>
  (ctx: NodeReconcile): Effect.Effect<Verdict, E | KubeError> =>
    Effect.gen(function* () {
      const { name } = ctx
      const stored = ports.store.get(name)
      if (stored._tag === "Invalid") {
        yield* ports.events.emitDeduped(`${name}/RepairRecordInvalid`, EVENT_DEDUPE_MS, {
          node: { name, uid: ports.cache.get(name)?.metadata?.uid },
          type: "Warning",
          reason: "RepairRecordInvalid",
          action: "Repair",
          note: `the repair journal of ${name} cannot be read; not acting: ${stored.error}`.slice(0, 1000)
        })
        return "Done"
      }
      if (stored._tag === "Record" && stored.record.phase === "Failed") {
        if (yield* ports.store.forgetIfCleared(name)) return "Continue"
        ports.queue.addAfter(name, FAILED_RECHECK_MS)
        return "Done"
      }
      if (stored._tag === "Record") {
        if (!isTerminal(stored.record)) yield* ports.resume(stored.record)
        return "Done"
      }
      return "Continue"
    })
