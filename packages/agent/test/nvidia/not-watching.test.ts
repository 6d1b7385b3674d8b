/**
 * NVIDIA devices but neither library loads: the problems NvidiaLibraries records become the one
 * NvidiaMonitorNotWatching Event (the agent binary's path is test/integration/agent-gpu.test.ts).
 */
import { Context, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { NvidiaLibraries } from "../../src/monitors/nvidia/libraries.ts"
import { notWatchingDetection } from "../../src/monitors/nvidia/not-watching.ts"
import { recordProduced } from "../reasons/produced-reasons.ts"

describe("NvidiaMonitorNotWatching", () => {
  it("names why each library is missing, as an Event of the nvidia monitor", async () => {
    const libs = await Effect.runPromise(
      Effect.scoped(
        Layer.build(
          NvidiaLibraries.layer({
            dcgmLibraryPath: "/nonexistent/libdcgm.so.4",
            nvmlLibraryPath: "/nonexistent/libnvidia-ml.so.1"
          })
        ).pipe(Effect.map((ctx) => Context.get(ctx, NvidiaLibraries)))
      )
    )
    expect(libs.dcgm).toBeUndefined()
    expect(libs.nvml).toBeUndefined()
    const d = notWatchingDetection(libs.problems, 5)
    recordProduced([d])
    expect(d).toMatchObject({
      reason: "NvidiaMonitorNotWatching",
      monitor: "nvidia",
      severity: "Event",
      conditionType: "AcceleratedHardwareReady",
      observedAtMs: 5
    })
    expect(d.message).toMatch(/^NVIDIA GPUs are not monitored: .*libdcgm\.so\.4.*; .*libnvidia-ml\.so\.1/)
  })
})
