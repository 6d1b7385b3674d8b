// The NVML service against the C test double (libnvidia-ml.so.1 built from test/double at test time).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Stream } from "effect"
import { beforeEach, inject } from "vitest"
import { FabricState, NvmlEventType, NvmlReturn } from "../src/constants.ts"
import { Nvml } from "../src/nvml.ts"
import { GpuDoubleInjector } from "./double/injector.ts"

const doubles = inject("gpuDoubles")
const injector = new GpuDoubleInjector(doubles)
const NvmlDouble = Nvml.layer(doubles.nvml)

beforeEach(() => {
  injector.reset()
  injector.nvmlSetDeviceCount(8)
})

describe("NVML", () => {
  it.live("a missing library is LibraryMissing", () =>
    Effect.gen(function* () {
      const err = yield* Effect.flip(
        Layer.build(Nvml.layer("/nonexistent/libnvidia-ml.so.1")).pipe(Effect.scoped)
      )
      expect(err._tag).toBe("LibraryMissing")
    })
  )
  it.live("device count and handles", () =>
    Effect.gen(function* () {
      const nvml = yield* Nvml
      expect(yield* nvml.deviceCount).toBe(8)
      injector.nvmlSetDeviceCount(7)
      expect(yield* nvml.deviceCount).toBe(7)
      const err = yield* Effect.flip(nvml.device(7))
      expect(err.code).toBe(NvmlReturn.INVALID_ARGUMENT)
    }).pipe(Effect.provide(NvmlDouble))
  )
  it.live("PCI info per device (nvmlDeviceGetPciInfo_v3)", () =>
    Effect.gen(function* () {
      const nvml = yield* Nvml
      injector.nvmlSetPci(2, { domain: 0, bus: 0x2a, device: 0 })
      expect(yield* nvml.pciInfo(2)).toEqual({
        busId: "00000000:2A:00.0",
        domain: 0,
        bus: 0x2a,
        device: 0,
        pciDeviceId: 0x233010de,
        pciSubSystemId: 0
      })
      expect((yield* nvml.pciInfo(0)).busId).toBe("00000000:10:00.0")
      const err = yield* Effect.flip(nvml.pciInfo(8))
      expect(err.code).toBe(NvmlReturn.INVALID_ARGUMENT)
    }).pipe(Effect.provide(NvmlDouble))
  )
  it.live("GPU recovery action (field 230): each value; Absent where the driver lacks it, not an error", () =>
    Effect.gen(function* () {
      const nvml = yield* Nvml
      expect(yield* nvml.gpuRecoveryAction(0)).toEqual({ _tag: "Present", value: 0 })
      for (const value of [1, 2, 3, 4, 5]) {
        injector.nvmlSetRecoveryAction(3, value)
        expect(yield* nvml.gpuRecoveryAction(3)).toEqual({ _tag: "Present", value })
      }
      // a driver before R570: the call works, the field is NOT_SUPPORTED
      injector.nvmlSetRecoveryAction(1, 2, { perValueReturn: NvmlReturn.NOT_SUPPORTED })
      expect((yield* nvml.gpuRecoveryAction(1))._tag).toBe("Absent")
      injector.nvmlSetRecoveryAction(1, 2, { callReturn: NvmlReturn.FUNCTION_NOT_FOUND })
      expect((yield* nvml.gpuRecoveryAction(1))._tag).toBe("Absent")
      // a lost GPU is a failed call, not "absent"
      injector.nvmlSetRecoveryAction(2, 0, { perValueReturn: NvmlReturn.GPU_IS_LOST })
      const err = yield* Effect.flip(nvml.gpuRecoveryAction(2))
      expect(err.code).toBe(NvmlReturn.GPU_IS_LOST)
    }).pipe(Effect.provide(NvmlDouble))
  )
  it.live("clock event reasons keep all 64 bits", () =>
    Effect.gen(function* () {
      const nvml = yield* Nvml
      injector.nvmlSetClockReasons(1, 0x48n)
      expect(yield* nvml.clockEventReasons(1)).toBe(0x48n)
      expect(yield* nvml.clockEventReasons(0)).toBe(0n)
    }).pipe(Effect.provide(NvmlDouble))
  )
  it.live("fabric info v3, and the v2 fallback on a driver that refuses v3", () =>
    Effect.gen(function* () {
      const nvml = yield* Nvml
      injector.nvmlSetFabric(0, {
        state: FabricState.COMPLETED,
        status: 0,
        cliqueId: 7,
        healthMask: 0x1aa,
        healthSummary: 1
      })
      expect(yield* nvml.fabricInfo(0)).toEqual({
        version: 3,
        state: 3,
        status: 0,
        cliqueId: 7,
        healthMask: 0x1aa,
        healthSummary: 1
      })
      injector.nvmlSetOldDriver(true)
      expect(yield* nvml.fabricInfo(0)).toEqual({
        version: 2,
        state: 3,
        status: 0,
        cliqueId: 7,
        healthMask: 0x1aa,
        healthSummary: undefined
      })
      injector.nvmlSetFabric(1, {
        state: 0,
        status: 0,
        cliqueId: 0,
        healthMask: 0,
        healthSummary: 0,
        callReturn: 3
      })
      expect((yield* Effect.flip(nvml.fabricInfo(1))).code).toBe(NvmlReturn.NOT_SUPPORTED)
    }).pipe(Effect.provide(NvmlDouble))
  )
  it.live("retired pages (size query then read) and remapped rows", () =>
    Effect.gen(function* () {
      const nvml = yield* Nvml
      injector.nvmlAddRetiredPage(3, 1, 0x1234000n, 1_700_000_000n)
      injector.nvmlAddRetiredPage(3, 1, 0x5678000n, 1_700_000_001n)
      expect(yield* nvml.retiredPages(3, 1)).toEqual({
        addresses: [0x1234000n, 0x5678000n],
        timestamps: [1_700_000_000n, 1_700_000_001n]
      })
      expect(yield* nvml.retiredPages(3, 0)).toEqual({ addresses: [], timestamps: [] })
      injector.nvmlSetRemappedRows(2, { corr: 1, unc: 2, pending: 1, failure: 0 })
      expect(yield* nvml.remappedRows(2)).toEqual({
        correctable: 1,
        uncorrectable: 2,
        pending: true,
        failureOccurred: false
      })
    }).pipe(Effect.provide(NvmlDouble))
  )
  it.live("XID and DBE events are waited on off the main thread", () =>
    Effect.gen(function* () {
      const nvml = yield* Nvml
      const fiber = yield* nvml
        .events(NvmlEventType.XidCriticalError | NvmlEventType.DoubleBitEccError, 100)
        .pipe(Stream.take(3), Stream.runCollect, Effect.forkChild)
      yield* Effect.sleep("30 millis") // the event set registers inside the stream
      // The main thread stays free while a wait is pending: timers keep firing.
      let ticks = 0
      const timer = setInterval(() => ticks++, 5)
      yield* Effect.sleep("60 millis")
      clearInterval(timer)
      // A blocked main thread would fire no timer at all; any tick proves the wait is off-thread (counts vary under load).
      expect(ticks).toBeGreaterThan(0)
      // Each device's registration happens inside the stream, later under load: post once it is registered (a post
      // to a device no set watches yet is delivered nowhere and changes nothing).
      const post = (device: number, type: bigint, data: bigint) =>
        Effect.gen(function* () {
          for (let i = 0; i < 250; i++) {
            if (injector.nvmlPostEvent(device, type, data) === 1) return 1
            yield* Effect.sleep("20 millis")
          }
          return 0
        })
      expect(yield* post(2, 0x8n, 79n)).toBe(1)
      expect(yield* post(0, 0x2n, 0n)).toBe(1)
      expect(yield* post(5, 0x8n, 999n)).toBe(1)
      const got = yield* Fiber.join(fiber)
      expect(got.map((e) => [e.deviceIndex, e.eventType, e.eventData])).toEqual([
        [2, 0x8n, 79n],
        [0, 0x2n, 0n],
        [5, 0x8n, 999n]
      ])
      expect(got[0]!.gpuInstanceId).toBe(0xffffffff)
    }).pipe(Effect.provide(NvmlDouble))
  )
})
