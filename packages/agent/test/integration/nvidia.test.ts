/**
 * The NVIDIA monitor in process against the real local API server: C test double (libdcgm.so.4,
 * libnvidia-ml.so.1) -> monitor -> ConditionWriter -> Node status, observed through a watch. One kwok Node,
 * one sequence. Needs the cluster harness (globalSetup in vitest.integration.config.ts).
 */
import { clients, createReadyFakeNode, deleteNode, kubeconfigPath } from "@nodemend/cluster-harness"
import { FieldId, HealthResult, HealthSystem } from "@nodemend/dcgm-native"
import { buildGpuDoubles, GpuDoubleInjector } from "@nodemend/dcgm-native/test-double"
import { Effect, Exit, Fiber, Layer, Schema, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ConditionWriter, conditionWriterLayer } from "../../src/k8s/condition-writer.ts"
import { kubeApiLayer } from "../../src/k8s/kube-api.ts"
import type { Finding } from "../../src/model.ts"
import { NvidiaLibraries } from "../../src/monitors/nvidia/libraries.ts"
import { runNvidiaMonitorScheduled } from "../nvidia/run-monitor.ts"
import { NvidiaMonitorSettings } from "../../src/monitors/nvidia/settings.ts"
import { XidDeduplicator } from "../../src/monitors/nvidia/xid-deduplicator.ts"
import { hostWithGpus } from "../nvidia/gpu-host.ts"
import { type NodeConditionWatch, watchNodeCondition } from "./node-condition-watch.ts"

const TYPE = "AcceleratedHardwareReady"

describe("NVIDIA monitor -> ConditionWriter -> API server", () => {
  const { kc, core } = clients()
  const doubles = buildGpuDoubles()
  const injector = new GpuDoubleInjector(doubles)
  let nodeName = ""
  let watch: NodeConditionWatch
  let scope: Scope.Closeable
  let fiber: Fiber.Fiber<void> | undefined
  /** Every fabric-mask verdict the monitor reached (a Resolution per healthy GPU per poll). */
  const fabricVerdicts: Finding[] = []

  beforeAll(async () => {
    injector.reset()
    injector.setGpuCount(8)
    injector.nvmlSetDeviceCount(8)
    // kwok writes its own status first; start after it so the two writers do not race on a fresh Node
    nodeName = (await createReadyFakeNode(core)).metadata!.name!
    watch = await watchNodeCondition(kc, core, nodeName, TYPE)

    const settings = Schema.decodeUnknownSync(NvidiaMonitorSettings)({
      dcgmLibraryPath: doubles.dcgm,
      nvmlLibraryPath: doubles.nvml,
      hostRoot: hostWithGpus(8),
      pollSeconds: 1,
      windowSeconds: 300
    })
    const layers = Layer.mergeAll(
      conditionWriterLayer({ managed: new Set([TYPE]), bootId: "it-boot", heartbeatMs: 300_000 }).pipe(
        Layer.provide(kubeApiLayer(kubeconfigPath(), nodeName))
      ),
      NvidiaLibraries.layer(settings),
      XidDeduplicator.layer
    )
    scope = await Effect.runPromise(Scope.make())
    // The layers live in `scope` (until afterAll), not just while the forking effect runs.
    const ctx = await Effect.runPromise(Layer.buildWithScope(layers, scope))
    fiber = await Effect.runPromise(
      Effect.gen(function* () {
        const writer = yield* ConditionWriter
        // Condition detections and resolutions go to the writer (Events are the EventRecorder's).
        const submit = (fs: readonly Finding[]) =>
          Effect.sync(() => {
            for (const f of fs) if (f.reason === "NvidiaFabricError") fabricVerdicts.push(f)
          }).pipe(
            Effect.andThen(
              writer.submit(fs.filter((f) => f._tag === "Resolution" || f.severity === "Condition"))
            )
          )
        return yield* Effect.forkDetach(
          runNvidiaMonitorScheduled(
            { settings, instanceType: "p5.48xlarge" },
            { findings: submit, status: () => Effect.void }
          ).pipe(Effect.scoped)
        )
      }).pipe(Effect.provide(ctx))
    )
  }, 240_000)

  afterAll(async () => {
    watch?.stop()
    if (fiber !== undefined) await Effect.runPromise(Fiber.interrupt(fiber))
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
    if (nodeName) await deleteNode(core, nodeName)
  })

  it("writes AcceleratedHardwareReady=True once watching", async () => {
    const c = await watch.next((c) => c.status === "True")
    expect(c.reason).toBe("NvidiaGPUIsReady")
  })

  it("a healthy 0x1AA fabric mask on every GPU changes nothing", async () => {
    for (let gpu = 0; gpu < 8; gpu++)
      injector.injectField({ entityId: gpu, fieldId: FieldId.FABRIC_HEALTH_MASK, value: 0x1aa })
    // proof that polls read the injected masks: three verdicts per GPU after the injection, all healthy
    const from = fabricVerdicts.length
    const deadline = Date.now() + 30_000
    while (fabricVerdicts.length - from < 3 * 8) {
      if (Date.now() > deadline) throw new Error("the monitor did not poll the fabric masks")
      await new Promise((r) => setTimeout(r, 100))
    }
    const verdicts = fabricVerdicts.slice(from)
    expect(verdicts.filter((f) => f._tag === "Detection")).toEqual([])
    expect(new Set(verdicts.map((f) => f.subject)).size).toBe(8)
    expect(watch.latest()).toMatchObject({ status: "True", reason: "NvidiaGPUIsReady" })
    expect(watch.history.some((c) => c.reason === "NvidiaFabricError")).toBe(false)
  })

  it("Fabric Manager status 4 sets the condition False; status 3 recovers it", async () => {
    const from = watch.history.length
    injector.injectField({ entityId: 1, fieldId: FieldId.FABRIC_MANAGER_STATUS, value: 4 })
    const bad = await watch.next((c) => c.status === "False", 30_000, from)
    expect(bad.reason).toBe("FabricManagerNotRunning")
    expect(bad.message).toContain("Fabric Manager status: Failure")
    const again = watch.history.length
    injector.injectField({ entityId: 1, fieldId: FieldId.FABRIC_MANAGER_STATUS, value: 3 })
    await watch.next((c) => c.status === "True", 30_000, again)
  })

  it("7 of 8 GPUs visible is NvidiaDeviceCountMismatch; 8 again recovers", async () => {
    const from = watch.history.length
    injector.setGpuCount(7)
    injector.nvmlSetDeviceCount(7)
    const bad = await watch.next((c) => c.status === "False", 30_000, from)
    expect(bad.reason).toBe("NvidiaDeviceCountMismatch")
    expect(bad.message).toContain("DCGM detected 7 GPUs but 8 nvidia device files were detected")
    const again = watch.history.length
    injector.setGpuCount(8)
    injector.nvmlSetDeviceCount(8)
    await watch.next((c) => c.status === "True", 30_000, again)
  })

  it("a FAIL health incident sets the condition False with DCGMHealthCode{code}; cleared, it recovers", async () => {
    const from = watch.history.length
    // dcgm_errors.h (DCGM v4.6.0): 4 = DCGM_FR_VOLATILE_DBE_DETECTED, message from DCGM_FR_VOLATILE_DBE_DETECTED_MSG
    injector.addHealthIncident({
      system: HealthSystem.MEM,
      health: HealthResult.FAIL,
      code: 4,
      message: "Detected 1 volatile double-bit ECC error(s) in GPU 6.",
      entityId: 6
    })
    const bad = await watch.next((c) => c.status === "False", 30_000, from)
    expect(bad.reason).toBe("DCGMHealthCode4")
    expect(bad.message).toContain("DCGM detected issues in health check system with error code 4")
    const again = watch.history.length
    injector.clearHealthIncidents()
    await watch.next((c) => c.status === "True", 30_000, again)
  })

  it("a DBE fired from a foreign thread sets the condition False with NvidiaDoubleBitError", async () => {
    const from = watch.history.length
    injector.firePolicy({ condition: "DBE", gpuId: 4, location: 2, numerrors: 1 })
    const bad = await watch.next((c) => c.status === "False", 30_000, from)
    expect(bad.reason).toBe("NvidiaDoubleBitError")
    expect(bad.message).toContain("detected 1 Nvidia Double Bit error(s) on location Device")
  })
})
