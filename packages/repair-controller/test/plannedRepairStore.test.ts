// The planned repairs' journal (controller/PlannedRepairStore.ts) against an in-memory ConfigMap store that merges
// `data` as the API server's merge patch does: an acted mark survives a restart (the event is not planned again), a
// mark is written only for a repair that was recorded (a refused one leaves its plan), the plans are written for
// `kubectl nodemend status`, and unreadable contents are replaced, never trusted.
import { describe, expect, it } from "@effect/vitest"
import { type ConfigMap, KubeError } from "@nodemend/kube-access"
import { Effect, Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import type { ControllerEnv } from "../src/controller/ControllerEnv.ts"
import { makePlannedRepairStore } from "../src/controller/PlannedRepairStore.ts"
import { markStarted } from "../src/controller/plannedRepair.ts"
import { plannedMatch, planFor } from "../src/decide/scheduledEvents.ts"
import type { ScheduledEvent } from "../src/domain/Instance.ts"
import {
  ACTED_KEEP_MS,
  PLANNED_REPAIRS_CONFIGMAP,
  type PlanView,
  parsePlans
} from "../src/domain/PlannedRepairs.ts"
import type { RepairRecord } from "../src/domain/RepairRecord.ts"
import type { KubeShape } from "../src/kube/Kube.ts"

const HOUR = 3_600_000
const NOW = Date.parse("2026-12-07T00:00:00Z")
const config = Result.getOrThrow(decodeConfig({ namespace: "ns" }))
const REBOOT: ScheduledEvent = {
  id: "instance-event-0reboot",
  code: "system-reboot",
  description: "scheduled reboot",
  notBefore: NOW + 4 * HOUR,
  notAfter: NOW + 6 * HOUR
}

/** ConfigMaps kept across "restarts"; a write merges its keys into `data` (the API server's merge patch). */
const fakeKube = () => {
  const cms = new Map<string, ConfigMap>()
  const kube = {
    readConfigMap: (_ns: string, name: string) =>
      cms.has(name)
        ? Effect.succeed(cms.get(name)!)
        : Effect.fail(
            new KubeError({ operation: "read", code: 404, reason: "NotFound", message: "not found" })
          ),
    upsertConfigMap: (body: ConfigMap) =>
      Effect.sync(() => {
        const name = body.metadata?.name ?? ""
        cms.set(name, { ...body, data: { ...cms.get(name)?.data, ...body.data } })
      })
  } as unknown as KubeShape
  return { kube, cms }
}
const quiet = () => Effect.void

const record = { id: "u1-abc", node: { name: "n1" } } as unknown as RepairRecord
const plan = planFor([REBOOT], { leadMs: 2 * HOUR }, NOW)!
const governing = plannedMatch(config, plan)
const envWith = (store: ReturnType<typeof makePlannedRepairStore>) =>
  ({ plannedRepairs: store }) as unknown as ControllerEnv

describe("PlannedRepairStore", () => {
  it.effect("a restart keeps what a started repair was for: the event is not planned again", () =>
    Effect.gen(function* () {
      const { kube } = fakeKube()
      const before = makePlannedRepairStore(kube, config, quiet)
      yield* before.load
      expect(before.acted(REBOOT.id)).toBe(false)
      yield* markStarted(envWith(before), record, plan, governing, NOW)
      expect(before.acted(REBOOT.id)).toBe(true)
      // The restarted controller: a new store over the same ConfigMap.
      const after = makePlannedRepairStore(kube, config, quiet)
      expect(after.acted(REBOOT.id)).toBe(false)
      yield* after.load
      expect(after.acted(REBOOT.id)).toBe(true)
      expect(after.acted("instance-event-other")).toBe(false)
    })
  )

  it.effect("a mark goes only for the planned match: another fault's repair leaves the plan", () =>
    Effect.gen(function* () {
      const { kube, cms } = fakeKube()
      const store = makePlannedRepairStore(kube, config, quiet)
      yield* markStarted(envWith(store), record, plan, { ...governing, conditionType: "KernelReady" }, NOW)
      yield* markStarted(envWith(store), record, undefined, governing, NOW)
      expect(store.acted(REBOOT.id)).toBe(false)
      expect(cms.has(PLANNED_REPAIRS_CONFIGMAP)).toBe(false)
    })
  )

  it.effect("the plans are written together, once per change, next to the acted marks", () =>
    Effect.gen(function* () {
      const { kube, cms } = fakeKube()
      const store = makePlannedRepairStore(kube, config, quiet)
      yield* markStarted(envWith(store), record, plan, governing, NOW)
      const view: PlanView = {
        node: "n2",
        eventId: "instance-event-0ret",
        code: "instance-retirement",
        reason: "EC2InstanceRetirementScheduled",
        action: "Replace",
        notBefore: NOW + 10 * HOUR,
        dueAt: NOW + 8 * HOUR,
        state: "held",
        heldBy: "budget: 1 in flight, allowed 1",
        text: "EC2 instance-retirement ...",
        at: NOW
      }
      store.setPlan("n2", view)
      yield* store.flush
      const written = () =>
        Result.getOrThrow(parsePlans(cms.get(PLANNED_REPAIRS_CONFIGMAP)?.data?.plans ?? ""))
      expect(written()).toEqual([view])
      // The merge kept the marks; a restart reads them.
      const after = makePlannedRepairStore(kube, config, quiet)
      yield* after.load
      expect(after.acted(REBOOT.id)).toBe(true)
      store.setPlan("n2", undefined)
      yield* store.flush
      expect(written()).toEqual([])
    })
  )

  it.effect("an unreadable journal is logged and no mark is trusted from it", () =>
    Effect.gen(function* () {
      const { kube, cms } = fakeKube()
      cms.set(PLANNED_REPAIRS_CONFIGMAP, {
        metadata: { name: PLANNED_REPAIRS_CONFIGMAP },
        data: { acted: "{v:1" }
      })
      const logged: string[] = []
      const store = makePlannedRepairStore(kube, config, (msg) => Effect.sync(() => void logged.push(msg)))
      yield* store.load
      expect(store.acted(REBOOT.id)).toBe(false)
      expect(logged).toHaveLength(1)
    })
  )

  it.effect("a mark is dropped a week after its event's window, not before", () =>
    Effect.gen(function* () {
      const { kube } = fakeKube()
      const store = makePlannedRepairStore(kube, config, quiet)
      yield* markStarted(envWith(store), record, plan, governing, NOW)
      // An event of a later week, marked after the first one's window.
      const later = {
        ...REBOOT,
        id: "instance-event-later",
        notBefore: NOW + 30 * 24 * HOUR,
        notAfter: undefined
      }
      const other = { ...plan, event: later }
      yield* markStarted(envWith(store), record, other, governing, REBOOT.notAfter! + ACTED_KEEP_MS)
      expect(store.acted(REBOOT.id)).toBe(true)
      yield* markStarted(envWith(store), record, other, governing, REBOOT.notAfter! + ACTED_KEEP_MS + 1)
      expect(store.acted(REBOOT.id)).toBe(false)
      expect(store.acted("instance-event-later")).toBe(true)
    })
  )
})
