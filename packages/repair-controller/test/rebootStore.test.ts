// The reboots' journal (controller/RebootStore.ts) against an in-memory ConfigMap store: a Reboot repair that ends
// well is remembered for its node, a restarted controller reads it back before deciding (the fault back within the
// window is then replaced), Replace repairs and reboots escalated within their repair are not reboots, old marks go.
import { describe, expect, it } from "@effect/vitest"
import { type ConfigMap, KubeError } from "@nodemend/kube-access"
import { Effect, Result } from "effect"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { makeRebootStore } from "../src/controller/RebootStore.ts"
import { escalationOf } from "../src/decide/escalation.ts"
import { matchPolicies } from "../src/decide/policyMatch.ts"
import { REBOOTS_CONFIGMAP } from "../src/domain/Reboots.ts"
import type { RepairRecord } from "../src/domain/RepairRecord.ts"
import type { KubeShape } from "../src/kube/Kube.ts"
import { cond, MIN, node } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")
const config = Result.getOrThrow(
  decodeConfig({
    namespace: "ns",
    policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 60, action: "Reboot" }]
  })
)

const fakeKube = () => {
  const cms = new Map<string, ConfigMap>()
  const kube = {
    readConfigMap: (_ns: string, name: string) =>
      cms.has(name)
        ? Effect.succeed(cms.get(name)!)
        : Effect.fail(
            new KubeError({ operation: "read", code: 404, reason: "NotFound", message: "not found" })
          ),
    upsertConfigMap: (body: ConfigMap) => Effect.sync(() => void cms.set(body.metadata?.name ?? "", body))
  } as unknown as KubeShape
  return { kube, cms }
}

const ended = (name: string, finishedAt: number, over: Partial<RepairRecord> = {}): RepairRecord =>
  ({
    v: 3,
    id: `r-${name}-${finishedAt}`,
    phase: "Succeeded",
    action: "Reboot",
    conditionType: "KernelReady",
    conditionStatus: "False",
    reason: "KernelDeadlock",
    startedAt: new Date(finishedAt - 10 * MIN).toISOString(),
    finishedAt: new Date(finishedAt).toISOString(),
    node: { name, uid: `uid-${name}`, providerID: `kwok://${name}`, pool: "p" },
    ...over
  }) as unknown as RepairRecord

/** n1's KernelReady fault back at `backAt`: does a store's memory escalate its repair? */
const escalates = (marks: ReturnType<ReturnType<typeof makeRebootStore>["of"]>, backAt: number) => {
  const n = node("n1", [cond("KernelReady", "False", backAt, "KernelDeadlock")])
  return escalationOf(config, n, matchPolicies(config, n)[0]!, marks) !== undefined
}

describe("RebootStore", () => {
  it.effect(
    "a reboot that ended well survives a restart, and the fault back within the window escalates",
    () =>
      Effect.gen(function* () {
        const { kube, cms } = fakeKube()
        const before = makeRebootStore(kube, config, () => Effect.void)
        yield* before.load
        yield* before.repaired(ended("n1", T0), T0)
        expect(cms.has(REBOOTS_CONFIGMAP)).toBe(true)
        const after = makeRebootStore(kube, config, () => Effect.void)
        expect(after.of("n1")).toEqual([])
        yield* after.load
        expect(after.of("n1")).toMatchObject([
          { node: "n1", providerID: "kwok://n1", at: T0, reason: "KernelDeadlock" }
        ])
        expect(escalates(after.of("n1"), T0 + 20 * MIN)).toBe(true)
        expect(escalates(after.of("n1"), T0 + 61 * MIN)).toBe(false)
      })
  )

  it.effect("only reboots count: a Replace, or a reboot escalated within its repair, leaves no mark", () =>
    Effect.gen(function* () {
      const { kube, cms } = fakeKube()
      const store = makeRebootStore(kube, config, () => Effect.void)
      yield* store.repaired(ended("n1", T0, { action: "Replace" }), T0)
      yield* store.repaired(ended("n1", T0, { action: "Replace", escalatedFrom: "Reboot" }), T0)
      expect(cms.size).toBe(0)
      expect(store.of("n1")).toEqual([])
    })
  )

  it.effect("one mark per node and condition type (the newest); marks past the longest window go", () =>
    Effect.gen(function* () {
      const { kube } = fakeKube()
      const store = makeRebootStore(kube, config, () => Effect.void)
      yield* store.repaired(ended("n1", T0), T0)
      yield* store.repaired(ended("n2", T0 + 30 * MIN), T0 + 30 * MIN)
      yield* store.repaired(ended("n2", T0 + 50 * MIN), T0 + 50 * MIN)
      expect(store.of("n2").map((m) => m.at)).toEqual([T0 + 50 * MIN])
      // An hour (the default window) after n1's reboot it is forgotten at the next write.
      yield* store.repaired(ended("n3", T0 + 61 * MIN), T0 + 61 * MIN)
      expect(store.of("n1")).toEqual([])
      expect(store.of("n2")).toHaveLength(1)
    })
  )

  it.effect("unreadable contents are logged and ignored, and replaced at the next write", () =>
    Effect.gen(function* () {
      const { kube, cms } = fakeKube()
      cms.set(REBOOTS_CONFIGMAP, { metadata: { name: REBOOTS_CONFIGMAP }, data: { reboots: "{not json" } })
      const logged: string[] = []
      const store = makeRebootStore(kube, config, (msg) => Effect.sync(() => void logged.push(msg)))
      yield* store.load
      expect(logged).toEqual(["unreadable reboots journal; ignored (replaced at the next reboot)"])
      yield* store.repaired(ended("n1", T0), T0)
      const again = makeRebootStore(kube, config, () => Effect.void)
      yield* again.load
      expect(again.of("n1")).toHaveLength(1)
    })
  )
})
