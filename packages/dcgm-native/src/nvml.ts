/**
 * The NVML Effect service (libnvidia-ml.so.1): device count and handles, clock event reasons, GPU fabric info,
 * retired pages / remapped rows, and XID / DBE events. Every call runs on koffi's worker pool (NVML calls can
 * hang on a sick GPU, e.g. after XID 119); event waits use a short timeout in a loop, never the main thread.
 */
import koffi, { type LibraryHandle } from "koffi"
import { Cause, Context, Effect, Layer, Queue, Stream } from "effect"
import { NvmlFieldId, NvmlReturn } from "./constants.ts"
import { LibraryMissing, NvmlCallFailed, VersionMismatch } from "./errors.ts"
import {
  NvmlEventData,
  NvmlGpuFabricInfoV2,
  NvmlGpuFabricInfoV3,
  NvmlPciInfo,
  StructVersion
} from "./layouts.ts"
import { callAsync, type NativeFunction } from "./native-call.ts"

export const DEFAULT_NVML_LIBRARY = "libnvidia-ml.so.1"

/** A device handle: an opaque pointer, branded so it is not confused with other BigInts. */
export type NvmlDevice = bigint & { readonly __nvmlDevice: unique symbol }

export interface FabricInfo {
  /** Which struct version the driver accepted (3 has healthSummary). */
  readonly version: 2 | 3
  readonly state: number
  /** nvmlReturn_t of fabric training; meaningful only when state is COMPLETED (3). */
  readonly status: number
  readonly cliqueId: number
  readonly healthMask: number
  readonly healthSummary: number | undefined
}

/** nvmlPciInfo_t of a device. */
export interface PciInfo {
  /** `dddddddd:bb:dd.f` as the driver formats it (NVML_DEVICE_PCI_BUS_ID_FMT). */
  readonly busId: string
  readonly domain: number
  readonly bus: number
  readonly device: number
  /** Device id in the high 16 bits, vendor id (0x10DE) in the low 16. */
  readonly pciDeviceId: number
  readonly pciSubSystemId: number
}

export interface RemappedRows {
  readonly correctable: number
  readonly uncorrectable: number
  readonly pending: boolean
  readonly failureOccurred: boolean
}

export interface RetiredPages {
  readonly addresses: readonly bigint[]
  readonly timestamps: readonly bigint[]
}

/**
 * The driver's GPU recovery action (field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION): `Absent` where this NVML or
 * driver does not offer it (no nvmlDeviceGetFieldValues, or the field NOT_SUPPORTED / unknown: drivers before
 * R570), which is not a fault.
 */
export type RecoveryActionReading =
  | { readonly _tag: "Present"; readonly value: number }
  | { readonly _tag: "Absent"; readonly detail: string }

export interface NvmlEvent {
  readonly deviceIndex: number
  readonly eventType: bigint
  /** The XID for XidCriticalError events (999 = unknown XID), else 0. */
  readonly eventData: bigint
  readonly gpuInstanceId: number
  readonly computeInstanceId: number
  /** When the wait returned, ms since epoch (NVML events carry no timestamp). */
  readonly observedAtMs: number
}

export interface NvmlApi {
  readonly libraryPath: string
  readonly deviceCount: Effect.Effect<number, NvmlCallFailed>
  readonly device: (index: number) => Effect.Effect<NvmlDevice, NvmlCallFailed>
  readonly pciInfo: (index: number) => Effect.Effect<PciInfo, NvmlCallFailed>
  readonly clockEventReasons: (index: number) => Effect.Effect<bigint, NvmlCallFailed>
  readonly fabricInfo: (index: number) => Effect.Effect<FabricInfo, NvmlCallFailed>
  readonly retiredPages: (index: number, cause: 0 | 1) => Effect.Effect<RetiredPages, NvmlCallFailed>
  readonly remappedRows: (index: number) => Effect.Effect<RemappedRows, NvmlCallFailed>
  readonly gpuRecoveryAction: (index: number) => Effect.Effect<RecoveryActionReading, NvmlCallFailed>
  /**
   * Events of the given types from every device. The event set lives as long as the stream; a wait in
   * flight when the stream ends is awaited (at most `waitMs`) before the set is freed.
   */
  readonly events: (eventTypes: bigint, waitMs?: number) => Stream.Stream<NvmlEvent, NvmlCallFailed>
}

interface NvmlFunctions {
  readonly nvmlInit_v2: NativeFunction
  readonly nvmlShutdown: NativeFunction
  readonly nvmlErrorString: NativeFunction
  readonly nvmlDeviceGetCount_v2: NativeFunction
  readonly nvmlDeviceGetHandleByIndex_v2: NativeFunction
  readonly nvmlDeviceGetPciInfo_v3: NativeFunction
  readonly nvmlDeviceGetCurrentClocksEventReasons: NativeFunction
  readonly nvmlDeviceGetGpuFabricInfoV: NativeFunction | undefined
  readonly nvmlDeviceGetRetiredPages_v2: NativeFunction
  readonly nvmlDeviceGetRemappedRows: NativeFunction
  readonly nvmlDeviceGetFieldValues: NativeFunction | undefined
  readonly nvmlEventSetCreate: NativeFunction
  readonly nvmlDeviceRegisterEvents: NativeFunction
  readonly nvmlEventSetWait_v2: NativeFunction
  readonly nvmlEventSetFree: NativeFunction
}

const outPtr = koffi.out(koffi.pointer("void *"))

const loadNvml = (path: string): Effect.Effect<NvmlFunctions, LibraryMissing | VersionMismatch> =>
  Effect.suspend((): Effect.Effect<NvmlFunctions, LibraryMissing | VersionMismatch> => {
    let lib: LibraryHandle
    try {
      lib = koffi.load(path)
    } catch (e) {
      return Effect.fail(
        new LibraryMissing({ library: "nvml", path, detail: String((e as Error).message ?? e) })
      )
    }
    try {
      const optional = (name: string, args: string[]): NativeFunction | undefined => {
        try {
          return lib.func(name, "int", args)
        } catch {
          return undefined
        }
      }
      const fabric = optional("nvmlDeviceGetGpuFabricInfoV", ["void *", "void *"])
      return Effect.succeed({
        nvmlInit_v2: lib.func("nvmlInit_v2", "int", []),
        nvmlShutdown: lib.func("nvmlShutdown", "int", []),
        nvmlErrorString: lib.func("nvmlErrorString", "const char *", ["int"]),
        nvmlDeviceGetCount_v2: lib.func("nvmlDeviceGetCount_v2", "int", [
          koffi.out(koffi.pointer("uint32_t"))
        ]),
        nvmlDeviceGetHandleByIndex_v2: lib.func("nvmlDeviceGetHandleByIndex_v2", "int", ["uint32_t", outPtr]),
        nvmlDeviceGetPciInfo_v3: lib.func("nvmlDeviceGetPciInfo_v3", "int", [
          "void *",
          koffi.out(koffi.pointer(NvmlPciInfo))
        ]),
        nvmlDeviceGetCurrentClocksEventReasons: lib.func("nvmlDeviceGetCurrentClocksEventReasons", "int", [
          "void *",
          koffi.out(koffi.pointer("uint64_t"))
        ]),
        nvmlDeviceGetGpuFabricInfoV: fabric,
        nvmlDeviceGetRetiredPages_v2: lib.func("nvmlDeviceGetRetiredPages_v2", "int", [
          "void *",
          "uint32_t",
          koffi.inout(koffi.pointer("uint32_t")),
          "void *",
          "void *"
        ]),
        nvmlDeviceGetRemappedRows: lib.func("nvmlDeviceGetRemappedRows", "int", [
          "void *",
          koffi.out(koffi.pointer("uint32_t")),
          koffi.out(koffi.pointer("uint32_t")),
          koffi.out(koffi.pointer("uint32_t")),
          koffi.out(koffi.pointer("uint32_t"))
        ]),
        nvmlDeviceGetFieldValues: optional("nvmlDeviceGetFieldValues", ["void *", "int", "void *"]),
        nvmlEventSetCreate: lib.func("nvmlEventSetCreate", "int", [outPtr]),
        nvmlDeviceRegisterEvents: lib.func("nvmlDeviceRegisterEvents", "int", [
          "void *",
          "uint64_t",
          "void *"
        ]),
        nvmlEventSetWait_v2: lib.func("nvmlEventSetWait_v2", "int", [
          "void *",
          koffi.out(koffi.pointer(NvmlEventData)),
          "uint32_t"
        ]),
        nvmlEventSetFree: lib.func("nvmlEventSetFree", "int", ["void *"])
      })
    } catch (e) {
      return Effect.fail(
        new VersionMismatch({ library: "nvml", detail: `${path}: ${String((e as Error).message ?? e)}` })
      )
    }
  })

/**
 * nvmlFieldValue_t (nvml.h): fieldId u32 @0, scopeId u32 @4, timestamp i64 @8, latencyUsec i64 @16,
 * valueType (nvmlValueType_t) @24, nvmlReturn @28, value (nvmlValue_t, an 8-byte union) @32; 40 bytes.
 */
const NVML_FIELD_VALUE_SIZE = 40
/** A driver that predates the field answers with one of these (per call or per value): absent, not a fault. */
const ABSENT_RETURNS: ReadonlySet<number> = new Set([
  NvmlReturn.NOT_SUPPORTED,
  NvmlReturn.FUNCTION_NOT_FOUND,
  NvmlReturn.INVALID_ARGUMENT,
  NvmlReturn.ARGUMENT_VERSION_MISMATCH
])

const decodeRecoveryAction = (
  buf: Buffer,
  fail: (call: string, rc: number) => NvmlCallFailed
): Effect.Effect<RecoveryActionReading, NvmlCallFailed> => {
  const rc = buf.readInt32LE(28)
  if (ABSENT_RETURNS.has(rc))
    return Effect.succeed({
      _tag: "Absent",
      detail: `field ${NvmlFieldId.GPU_RECOVERY_ACTION} returned ${rc}`
    })
  if (rc !== NvmlReturn.SUCCESS) return Effect.fail(fail("nvmlDeviceGetFieldValues", rc))
  // nvmlValueType_t: 1 unsigned int, 2 unsigned long, 3 unsigned long long, 4 signed long long, 5 signed int,
  // 6 unsigned short; the driver reports this enum as an unsigned int.
  const type = buf.readInt32LE(24)
  const value =
    type === 2 || type === 3 || type === 4
      ? Number(buf.readBigUInt64LE(32))
      : type === 6
        ? buf.readUInt16LE(32)
        : buf.readUInt32LE(32)
  return Effect.succeed({ _tag: "Present", value })
}

export class Nvml extends Context.Service<Nvml, NvmlApi>()("@nodemend/dcgm-native/Nvml") {
  /** Loads the library, nvmlInit_v2; nvmlShutdown (off the main thread) when the layer is released. */
  static readonly layer = (
    libraryPath: string = DEFAULT_NVML_LIBRARY
  ): Layer.Layer<Nvml, LibraryMissing | VersionMismatch | NvmlCallFailed> =>
    Layer.effect(
      Nvml,
      Effect.gen(function* () {
        const fns = yield* loadNvml(libraryPath)
        const fail = (call: string, rc: number) =>
          new NvmlCallFailed({
            call,
            code: rc,
            detail: (fns.nvmlErrorString(rc) as string | null) ?? `NVML error ${rc}`
          })
        const check = (call: string) => (rc: number) =>
          rc === NvmlReturn.SUCCESS ? Effect.void : Effect.fail(fail(call, rc))
        yield* Effect.acquireRelease(
          callAsync<number>(fns.nvmlInit_v2).pipe(Effect.flatMap(check("nvmlInit_v2"))),
          () => callAsync<number>(fns.nvmlShutdown)
        )

        const deviceCount = Effect.gen(function* () {
          const out = [0]
          yield* check("nvmlDeviceGetCount_v2")(yield* callAsync<number>(fns.nvmlDeviceGetCount_v2, out))
          return out[0]!
        })
        const device = (index: number) =>
          Effect.gen(function* () {
            const out: unknown[] = [null]
            yield* check("nvmlDeviceGetHandleByIndex_v2")(
              yield* callAsync<number>(fns.nvmlDeviceGetHandleByIndex_v2, index, out)
            )
            return out[0] as NvmlDevice
          })
        const pciInfo = (index: number) =>
          Effect.gen(function* () {
            const d = yield* device(index)
            const info = {} as PciInfo & { busIdLegacy: string }
            yield* check("nvmlDeviceGetPciInfo_v3")(
              yield* callAsync<number>(fns.nvmlDeviceGetPciInfo_v3, d, info)
            )
            return {
              busId: info.busId,
              domain: info.domain,
              bus: info.bus,
              device: info.device,
              pciDeviceId: info.pciDeviceId,
              pciSubSystemId: info.pciSubSystemId
            } satisfies PciInfo
          })
        const clockEventReasons = (index: number) =>
          Effect.gen(function* () {
            const d = yield* device(index)
            const out: (number | bigint)[] = [0]
            yield* check("nvmlDeviceGetCurrentClocksEventReasons")(
              yield* callAsync<number>(fns.nvmlDeviceGetCurrentClocksEventReasons, d, out)
            )
            return BigInt(out[0]!)
          })
        const fabricInfo = (index: number) =>
          Effect.gen(function* () {
            const fn = fns.nvmlDeviceGetGpuFabricInfoV
            if (fn === undefined)
              return yield* fail("nvmlDeviceGetGpuFabricInfoV", NvmlReturn.FUNCTION_NOT_FOUND)
            const d = yield* device(index)
            // v3 first; drivers older than NVML 13 refuse it (25 or 13): fall back to v2, as DCGM does.
            for (const [version, type, structVersion] of [
              [3, NvmlGpuFabricInfoV3, StructVersion.nvmlGpuFabricInfoV3],
              [2, NvmlGpuFabricInfoV2, StructVersion.nvmlGpuFabricInfoV2]
            ] as const) {
              const buf = Buffer.alloc(koffi.sizeof(type))
              buf.writeUInt32LE(structVersion, 0)
              const rc = yield* callAsync<number>(fn, d, buf)
              if (
                version === 3 &&
                (rc === NvmlReturn.ARGUMENT_VERSION_MISMATCH || rc === NvmlReturn.FUNCTION_NOT_FOUND)
              )
                continue
              yield* check("nvmlDeviceGetGpuFabricInfoV")(rc)
              const v = koffi.decode(buf, type) as {
                status: number
                cliqueId: number
                state: number
                healthMask: number
                healthSummary?: number
              }
              return {
                version,
                state: v.state,
                status: v.status,
                cliqueId: v.cliqueId,
                healthMask: v.healthMask,
                healthSummary: version === 3 ? v.healthSummary : undefined
              } satisfies FabricInfo
            }
            return yield* fail("nvmlDeviceGetGpuFabricInfoV", NvmlReturn.ARGUMENT_VERSION_MISMATCH)
          })
        const retiredPages = (index: number, cause: 0 | 1) =>
          Effect.gen(function* () {
            const d = yield* device(index)
            const count = [0]
            const rc0 = yield* callAsync<number>(
              fns.nvmlDeviceGetRetiredPages_v2,
              d,
              cause,
              count,
              null,
              null
            )
            if (rc0 !== NvmlReturn.SUCCESS && rc0 !== NvmlReturn.INSUFFICIENT_SIZE)
              return yield* fail("nvmlDeviceGetRetiredPages_v2", rc0)
            const n = count[0]!
            if (n === 0) return { addresses: [], timestamps: [] }
            const addresses = new BigUint64Array(n)
            const timestamps = new BigUint64Array(n)
            const rc = yield* callAsync<number>(
              fns.nvmlDeviceGetRetiredPages_v2,
              d,
              cause,
              count,
              addresses,
              timestamps
            )
            yield* check("nvmlDeviceGetRetiredPages_v2")(rc)
            return {
              addresses: Array.from(addresses.subarray(0, count[0]!)),
              timestamps: Array.from(timestamps.subarray(0, count[0]!))
            }
          })
        const remappedRows = (index: number) =>
          Effect.gen(function* () {
            const d = yield* device(index)
            const corr = [0]
            const unc = [0]
            const pending = [0]
            const failure = [0]
            yield* check("nvmlDeviceGetRemappedRows")(
              yield* callAsync<number>(fns.nvmlDeviceGetRemappedRows, d, corr, unc, pending, failure)
            )
            return {
              correctable: corr[0]!,
              uncorrectable: unc[0]!,
              pending: pending[0] === 1,
              failureOccurred: failure[0] === 1
            }
          })
        const gpuRecoveryAction = (index: number) =>
          Effect.gen(function* () {
            const fn = fns.nvmlDeviceGetFieldValues
            if (fn === undefined)
              return { _tag: "Absent", detail: "nvmlDeviceGetFieldValues not in this NVML" } as const
            const d = yield* device(index)
            const buf = Buffer.alloc(NVML_FIELD_VALUE_SIZE)
            buf.writeUInt32LE(NvmlFieldId.GPU_RECOVERY_ACTION, 0)
            const rc = yield* callAsync<number>(fn, d, 1, buf)
            if (ABSENT_RETURNS.has(rc))
              return { _tag: "Absent", detail: `nvmlDeviceGetFieldValues returned ${rc}` } as const
            yield* check("nvmlDeviceGetFieldValues")(rc)
            return yield* decodeRecoveryAction(buf, fail)
          })

        const events = (eventTypes: bigint, waitMs = 500) =>
          Stream.callback<NvmlEvent, NvmlCallFailed>((queue) =>
            Effect.gen(function* () {
              const n = yield* deviceCount
              const handles: bigint[] = []
              for (let i = 0; i < n; i++) handles.push(yield* device(i))
              // The wait running on a worker thread now; the release frees the set only once it has returned.
              const state = { stopped: false, inFlight: Promise.resolve() }
              // Created and registered on every device inside the (uninterruptible) acquisition: an interrupted
              // registration would return at once while the call still ran on a worker thread, and the release
              // would free the set under it (a heap corruption that surfaced as SIGSEGV/SIGABRT in later calls).
              const set = yield* Effect.acquireRelease(
                Effect.gen(function* () {
                  const out: unknown[] = [null]
                  yield* check("nvmlEventSetCreate")(yield* callAsync<number>(fns.nvmlEventSetCreate, out))
                  const created = out[0]
                  for (const h of handles) {
                    const rc = yield* callAsync<number>(fns.nvmlDeviceRegisterEvents, h, eventTypes, created)
                    // NOT_SUPPORTED leaves the set usable (some event types on some boards).
                    if (rc !== NvmlReturn.SUCCESS && rc !== NvmlReturn.NOT_SUPPORTED) {
                      yield* callAsync<number>(fns.nvmlEventSetFree, created)
                      return yield* fail("nvmlDeviceRegisterEvents", rc)
                    }
                  }
                  return created
                }),
                (s) =>
                  Effect.gen(function* () {
                    state.stopped = true
                    // Never free the set under a wait still running on a worker thread; a wait that does not
                    // return within its timeout is hung in the driver (a sick GPU): leak the set rather than
                    // free it under the wait, and do not hold the teardown for it.
                    const returned = yield* Effect.promise(() => state.inFlight).pipe(
                      Effect.timeoutOption(waitMs + 1000)
                    )
                    if (returned._tag === "Some") yield* callAsync<number>(fns.nvmlEventSetFree, s)
                    else
                      yield* Effect.logWarning("nvmlEventSetWait_v2 did not return; event set left allocated")
                  })
              )
              const waitOnce = () =>
                new Promise<void>((resolve) => {
                  const data = {} as {
                    device: unknown
                    eventType: number | bigint
                    eventData: number | bigint
                    gpuInstanceId: number
                    computeInstanceId: number
                  }
                  fns.nvmlEventSetWait_v2.async(set, data, waitMs, (err: unknown, rc: number) => {
                    if (err) Queue.failCauseUnsafe(queue, Cause.die(err))
                    else if (rc === NvmlReturn.SUCCESS) {
                      Queue.offerUnsafe(queue, {
                        deviceIndex: handles.indexOf(BigInt(data.device as bigint)),
                        eventType: BigInt(data.eventType),
                        eventData: BigInt(data.eventData),
                        gpuInstanceId: data.gpuInstanceId,
                        computeInstanceId: data.computeInstanceId,
                        observedAtMs: Date.now()
                      })
                    } else if (rc !== NvmlReturn.TIMEOUT) {
                      Queue.failCauseUnsafe(queue, Cause.fail(fail("nvmlEventSetWait_v2", rc)))
                      state.stopped = true
                    }
                    resolve()
                    if (!state.stopped) state.inFlight = waitOnce()
                  })
                })
              // unless the release has already run (a scope closed without interrupting this fiber first)
              if (!state.stopped) state.inFlight = waitOnce()
            })
          )

        return Nvml.of({
          libraryPath,
          deviceCount,
          device,
          pciInfo,
          clockEventReasons,
          fabricInfo,
          retiredPages,
          remappedRows,
          gpuRecoveryAction,
          events
        })
      })
    )
}
