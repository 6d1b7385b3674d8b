/**
 * Every DCGM policy violation type through the production path to the real API server: the C double fires
 * dcgmPolicyCallbackResponse_v2 from its own thread -> koffi decode -> NVIDIA monitor -> the agent's finding
 * sink (config overrides, XID deduplicator, ConditionWriter, EventRecorder) -> Node status and Events.
 * Wired as src/main.ts wires it, with the default config. Fixtures: test/fixtures/dcgm-policy-violations.ts.
 */
import { EventsV1Api } from "@kubernetes/client-node"
import { clients, createReadyFakeNode, deleteNode, kubeconfigPath, waitFor } from "@nodemend/cluster-harness"
import { buildGpuDoubles, GpuDoubleInjector } from "@nodemend/dcgm-native/test-double"
import { Effect, Exit, Fiber, Layer, Result, Schema, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseConfigText } from "../../src/config/load.ts"
import { hostFiles } from "../../src/checks/host-files.ts"
import { findingRoutes } from "../../src/finding-routes.ts"
import { ConditionWriter, conditionWriterLayer } from "../../src/k8s/condition-writer.ts"
import { EventRecorder, eventRecorderLayer } from "../../src/k8s/event-recorder.ts"
import { kubeApiLayer } from "../../src/k8s/kube-api.ts"
import { NvidiaLibraries } from "../../src/monitors/nvidia/libraries.ts"
import { runNvidiaMonitorScheduled } from "../nvidia/run-monitor.ts"
import { NvidiaMonitorSettings } from "../../src/monitors/nvidia/settings.ts"
import { XidDeduplicator } from "../../src/monitors/nvidia/xid-deduplicator.ts"
import { POLICY_VIOLATIONS } from "../fixtures/dcgm-policy-violations.ts"
import { hostWithGpus } from "../nvidia/gpu-host.ts"
import { nodeEvents } from "./node-events.ts"
import { type NodeConditionWatch, watchNodeCondition } from "./node-condition-watch.ts"

const TYPE = "AcceleratedHardwareReady"

describe("DCGM policy violations -> NVIDIA monitor -> finding sink -> API server", () => {
  const { kc, core } = clients()
  const events = kc.makeApiClient(EventsV1Api)
  const doubles = buildGpuDoubles()
  const injector = new GpuDoubleInjector(doubles)
  let nodeName = ""
  let watch: NodeConditionWatch
  let scope: Scope.Closeable
  let fiber: Fiber.Fiber<void> | undefined

  beforeAll(async () => {
    injector.reset()
    injector.setGpuCount(8)
    injector.nvmlSetDeviceCount(8)
    nodeName = (await createReadyFakeNode(core)).metadata!.name!
    watch = await watchNodeCondition(kc, core, nodeName, TYPE)
    const parsed = parseConfigText("", "default.yaml")
    if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
    const config = parsed.success
    const settings = Schema.decodeUnknownSync(NvidiaMonitorSettings)({
      dcgmLibraryPath: doubles.dcgm,
      nvmlLibraryPath: doubles.nvml,
      hostRoot: hostWithGpus(8)
    })
    const writer = conditionWriterLayer({ managed: new Set([TYPE]), bootId: "it-boot", heartbeatMs: 300_000 })
    const recorder = Layer.unwrap(
      Effect.map(Effect.service(ConditionWriter), (w) =>
        eventRecorderLayer({ nodeUid: w.nodeUid, budgetFor: () => config.events })
      )
    )
    const layers = Layer.mergeAll(
      Layer.provideMerge(recorder, writer).pipe(Layer.provide(kubeApiLayer(kubeconfigPath(), nodeName))),
      NvidiaLibraries.layer(settings),
      XidDeduplicator.layer
    )
    scope = await Effect.runPromise(Scope.make())
    const ctx = await Effect.runPromise(Layer.buildWithScope(layers, scope))
    fiber = await Effect.runPromise(
      Effect.gen(function* () {
        // the agent's own routing (src/finding-routes.ts), as main.ts uses it
        const routes = yield* findingRoutes(
          config,
          yield* ConditionWriter,
          yield* EventRecorder,
          yield* XidDeduplicator,
          hostFiles("/")
        )
        return yield* Effect.forkDetach(
          runNvidiaMonitorScheduled(
            { settings, instanceType: "p5.48xlarge" },
            { findings: routes.nvidiaMonitor, status: () => Effect.void }
          ).pipe(Effect.scoped)
        )
      }).pipe(Effect.provide(ctx), Scope.provide(scope))
    )
    await watch.next((c) => c.status === "True", 60_000)
    // the push path is registered once the double has a policy registration
    await waitFor("the DCGM policy registration", async () => injector.registrationCount() > 0 || undefined, {
      timeoutMs: 30_000,
      intervalMs: 100
    })
  }, 240_000)

  afterAll(async () => {
    watch?.stop()
    if (fiber !== undefined) await Effect.runPromise(Fiber.interrupt(fiber))
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
    if (nodeName) await deleteNode(core, nodeName)
  })

  it("each of the seven violation types reaches its reason: an Event or the condition", async () => {
    for (const v of POLICY_VIOLATIONS) injector.firePolicy(v.fire)
    const asEvents = POLICY_VIOLATIONS.filter((v) => v.severity === "Event")
    const asCondition = POLICY_VIOLATIONS.filter((v) => v.severity === "Condition")
    expect(asEvents.map((v) => v.reason).sort()).toEqual([
      "NvidiaPCIeError",
      "NvidiaPageRetirement",
      "NvidiaPowerError",
      "NvidiaThermalError"
    ])

    const got = await waitFor(
      "an Event per Event-severity violation",
      async () => {
        const evs = await nodeEvents(events, nodeName)
        return asEvents.every((v) => evs.some((e) => e.reason === v.reason)) ? evs : undefined
      },
      { timeoutMs: 30_000, intervalMs: 200 }
    )
    for (const v of asEvents) {
      const ev = got.find((e) => e.reason === v.reason)!
      expect(ev.note, v.reason).toBe(v.message)
      expect(ev.reportingController).toBe("nodemend.io/agent")
      expect(ev.type).toBe("Warning")
    }

    const bad = await watch.next(
      (c) => c.status === "False" && asCondition.every((v) => (c.message ?? "").includes(`${v.reason}: `)),
      30_000
    )
    for (const v of asCondition) expect(bad.message, v.reason).toContain(`${v.reason}: ${v.message}`)
    // Event-severity violations never touch the condition
    for (const v of asEvents) expect(bad.message).not.toContain(v.reason)
  })
})
