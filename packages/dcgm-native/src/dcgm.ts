/**
 * The DCGM Effect service: a process-wide library (dcgmInit .. dcgmShutdown) that opens sessions to
 * nv-hostengine (standalone, TCP or unix socket) or to an embedded engine. A session owns its policy
 * registration, field group and watches, and pushes policy violations into a Stream.
 *
 * Threading: the policy callback runs on a DCGM thread; koffi queues it to the JS main thread and the DCGM
 * thread waits until it returns, so the callback only decodes and enqueues. Every call that can wait on a DCGM
 * thread (teardown, polls) runs on koffi's worker pool, never on the main thread.
 */
import koffi from "koffi"
import { type Cause, Context, Effect, Layer, Queue, type Scope, Stream } from "effect"
import {
  ALL_POLICY_CONDITIONS,
  DCGM_GROUP_ALL_GPUS,
  DCGM_GROUP_ALL_NVSWITCHES,
  DCGM_MAX_NUM_DEVICES,
  DCGM_OPERATION_MODE_AUTO,
  DcgmReturn,
  EntityGroup,
  FieldId,
  HealthSystem,
  PolicyCondition,
  PolicyConditionIndex
} from "./constants.ts"
import { DEFAULT_DCGM_LIBRARY, type DcgmFunctions, loadDcgm } from "./dcgm-library.ts"
import { ConnectionRefused, DcgmCallFailed, type LibraryMissing, VersionMismatch } from "./errors.ts"
import { decodeFieldValue, type FieldReading } from "./field-value.ts"
import {
  FieldValueEntityEnumerationProto,
  FieldValueV1,
  FieldValueV2,
  GroupEntityPair,
  PolicyCallbackProto,
  StructVersion
} from "./layouts.ts"
import { callAsync, callAsyncThen } from "./native-call.ts"
import {
  DIAG_LEVELS,
  type DiagLevel,
  type DiagReport,
  decodeDiagResponse,
  diagResponseBuffer
} from "./diag-response.ts"
import { decodeHealthResponse, type HealthReport, healthResponseBuffer } from "./health-response.ts"
import { decodePolicyResponse, type PolicyViolation, type UndecodableViolation } from "./policy-violation.ts"

export type DcgmTarget =
  | {
      readonly _tag: "Standalone"
      /** "host", "host:port", or a socket path when `unixSocket` is set. */
      readonly address: string
      readonly unixSocket?: boolean
      readonly timeoutMs?: number
    }
  | { readonly _tag: "Embedded" }

export const describeTarget = (t: DcgmTarget): string =>
  t._tag === "Embedded" ? "embedded" : t.unixSocket ? `unix://${t.address}` : t.address

/** Thresholds of the policy set on all GPUs (go-dcgm / dcgmi defaults). */
export interface PolicyThresholds {
  readonly maxRetiredPages: number
  readonly maxTemperatureC: number
  readonly maxPowerW: number
}
export const DEFAULT_POLICY_THRESHOLDS: PolicyThresholds = {
  maxRetiredPages: 10,
  maxTemperatureC: 100,
  maxPowerW: 250
}

/** Fields watched for the polled path: clock event reasons, FM status, fabric health mask, XID, SXids. */
export const WATCHED_FIELDS: readonly number[] = [
  FieldId.CLOCKS_EVENT_REASONS,
  FieldId.FABRIC_MANAGER_STATUS,
  FieldId.FABRIC_HEALTH_MASK,
  FieldId.XID_ERROR,
  FieldId.SXID_FATAL_ERROR,
  FieldId.SXID_NON_FATAL_ERROR
]

export interface SessionOptions {
  readonly conditions?: number
  readonly thresholds?: PolicyThresholds
  /** Watch update interval (µs) and retention; retention must cover the poll window. */
  readonly updateFrequencyUs?: number
  readonly maxKeepAgeSec?: number
}

export type ViolationEvent = PolicyViolation | UndecodableViolation

export interface DcgmSession {
  readonly target: string
  /** Push path: one element per policy callback, decoded inside the callback. */
  readonly violations: Stream.Stream<ViolationEvent>
  /** GPU ids as DCGM numbers them. */
  readonly gpuIds: Effect.Effect<readonly number[], DcgmCallFailed>
  /** Cheap liveness check of the connection. */
  readonly ping: Effect.Effect<void, DcgmCallFailed>
  /**
   * Latest value of each field for each entity (default: every GPU). `live` sets DCGM_FV_FLAG_LIVE_DATA:
   * read the driver directly, no watch needed (static attributes such as the PCI bus id).
   */
  readonly latest: (
    fieldIds: readonly number[],
    entities?: readonly { readonly entityGroupId: number; readonly entityId: number }[],
    options?: { readonly live?: boolean }
  ) => Effect.Effect<readonly FieldReading[], DcgmCallFailed>
  /** Every sample of the watched fields with a timestamp >= sinceUs (µs since epoch). */
  readonly since: (sinceUs: number) => Effect.Effect<readonly FieldReading[], DcgmCallFailed>
  /** Health systems currently watched on all GPUs (dcgmHealthGet). */
  readonly healthSystems: Effect.Effect<number, DcgmCallFailed>
  /** dcgmHealthCheck on all GPUs: the overall verdict and every incident of the watched systems. */
  readonly healthCheck: Effect.Effect<HealthReport, DcgmCallFailed | VersionMismatch>
  /**
   * dcgmRunDiagnostic on all GPUs at a DCGM_DIAG_LEVEL-style level (1 short .. 4 xlong). Blocks a koffi
   * worker for as long as the diagnostic runs (seconds at level 1, minutes above), never the main thread.
   */
  readonly runDiagnostic: (level: DiagLevel) => Effect.Effect<DiagReport, DcgmCallFailed | VersionMismatch>
  /** Whether the NVSwitch watch could be set (no switches: false, with the reason). */
  readonly switchWatch: { readonly ok: boolean; readonly detail: string }
}

export interface DcgmApi {
  readonly libraryPath: string
  /** Opens a session; everything it set up is torn down when the scope closes. */
  readonly connect: (
    target: DcgmTarget,
    options?: SessionOptions
  ) => Effect.Effect<DcgmSession, ConnectionRefused | DcgmCallFailed | VersionMismatch, Scope.Scope>
}

export class Dcgm extends Context.Service<Dcgm, DcgmApi>()("@nodemend/dcgm-native/Dcgm") {
  /** Loads the library, dcgmInit; dcgmShutdown (off the main thread) when the layer is released. */
  static readonly layer = (
    libraryPath: string = DEFAULT_DCGM_LIBRARY
  ): Layer.Layer<Dcgm, LibraryMissing | VersionMismatch | DcgmCallFailed> =>
    Layer.effect(
      Dcgm,
      Effect.gen(function* () {
        const fns = yield* loadDcgm(libraryPath)
        yield* Effect.acquireRelease(
          Effect.gen(function* () {
            const rc = yield* callAsync<number>(fns.dcgmInit)
            if (rc !== DcgmReturn.OK) return yield* callFailed(fns, "dcgmInit", rc)
          }),
          () => callAsync<number>(fns.dcgmShutdown)
        )
        return Dcgm.of({ libraryPath, connect: (target, options) => openSession(fns, target, options ?? {}) })
      })
    )
}

const errorText = (fns: DcgmFunctions, rc: number): string => {
  const s = fns.errorString(rc) as string | null
  return s ?? `DCGM error ${rc}`
}

const callFailed = (fns: DcgmFunctions, call: string, rc: number) =>
  rc === DcgmReturn.VER_MISMATCH
    ? Effect.fail(new VersionMismatch({ library: "dcgm", detail: `${call}: ${errorText(fns, rc)}` }))
    : Effect.fail(new DcgmCallFailed({ call, code: rc, detail: errorText(fns, rc) }))

const check = (fns: DcgmFunctions, call: string) => (rc: number) =>
  rc === DcgmReturn.OK
    ? Effect.void
    : Effect.fail(new DcgmCallFailed({ call, code: rc, detail: errorText(fns, rc) }))

const policyParams = (conditions: number, t: PolicyThresholds) => {
  const parms = Array.from({ length: 7 }, () => ({ tag: 0, val: { boolean: 0 } as object }))
  const set = (name: keyof typeof PolicyConditionIndex, p: { tag: number; val: object }) => {
    if (conditions & PolicyCondition[name]) parms[PolicyConditionIndex[name]] = p
  }
  set("DBE", { tag: 0, val: { boolean: 1 } })
  set("PCI", { tag: 0, val: { boolean: 1 } })
  set("MAX_PAGES_RETIRED", { tag: 1, val: { llval: t.maxRetiredPages } })
  set("THERMAL", { tag: 1, val: { llval: t.maxTemperatureC } })
  set("POWER", { tag: 1, val: { llval: t.maxPowerW } })
  set("NVLINK", { tag: 0, val: { boolean: 1 } })
  set("XID", { tag: 0, val: { boolean: 1 } })
  return {
    version: StructVersion.policy,
    condition: conditions,
    mode: 0,
    isolation: 0,
    action: 0,
    validation: 0,
    response: 0,
    parms
  }
}

const FIELD_V1_SIZE = koffi.sizeof(FieldValueV1)
const FIELD_V2_SIZE = koffi.sizeof(FieldValueV2)
const V1_VALUE = koffi.offsetof(FieldValueV1, "value")
const V2_VALUE = koffi.offsetof(FieldValueV2, "value")

const readValue = (buf: unknown, base: number, fieldType: number) =>
  decodeFieldValue(
    fieldType,
    () => koffi.decode(buf, base, "int64_t"),
    () => koffi.decode(buf, base, "double") as number,
    () => koffi.decode(buf, base, "char", -1) as string
  )

let fieldGroupSerial = 0

type Handle = number | bigint

const openSession = (
  fns: DcgmFunctions,
  target: DcgmTarget,
  options: SessionOptions
): Effect.Effect<DcgmSession, ConnectionRefused | DcgmCallFailed | VersionMismatch, Scope.Scope> =>
  Effect.gen(function* () {
    const targetName = describeTarget(target)
    // 1. connection / embedded engine
    const handle = yield* Effect.acquireRelease(
      Effect.gen(function* () {
        const out: Handle[] = [0]
        if (target._tag === "Embedded") {
          const rc = yield* callAsync<number>(fns.dcgmStartEmbedded, DCGM_OPERATION_MODE_AUTO, out)
          if (rc !== DcgmReturn.OK)
            return yield* new ConnectionRefused({ target: targetName, code: rc, detail: errorText(fns, rc) })
        } else {
          const params = {
            version: StructVersion.connectV2Params,
            persistAfterDisconnect: 0,
            timeoutMs: target.timeoutMs ?? 5000,
            addressIsUnixSocket: target.unixSocket ? 1 : 0
          }
          const rc = yield* callAsync<number>(fns.dcgmConnect_v2, target.address, params, out)
          if (rc === DcgmReturn.VER_MISMATCH)
            return yield* new VersionMismatch({
              library: "dcgm",
              detail: "dcgmConnect_v2 refused dcgmConnectV2Params_v2"
            })
          if (rc !== DcgmReturn.OK)
            return yield* new ConnectionRefused({ target: targetName, code: rc, detail: errorText(fns, rc) })
        }
        return out[0]!
      }),
      (h) => callAsync<number>(target._tag === "Embedded" ? fns.dcgmStopEmbedded : fns.dcgmDisconnect, h)
    )

    // 2. policy: set conditions on all GPUs, register the callback
    const conditions = options.conditions ?? ALL_POLICY_CONDITIONS
    const policy = policyParams(conditions, options.thresholds ?? DEFAULT_POLICY_THRESHOLDS)
    const setRc = yield* callAsync<number>(fns.dcgmPolicySet, handle, DCGM_GROUP_ALL_GPUS, policy, 0)
    if (setRc !== DcgmReturn.OK) return yield* callFailed(fns, "dcgmPolicySet", setRc)

    const queue = yield* Queue.unbounded<ViolationEvent, Cause.Done>()
    let keepAlive: ReturnType<typeof setInterval> | undefined
    const onViolation = (response: unknown, _userData: unknown): number => {
      try {
        Queue.offerUnsafe(queue, decodePolicyResponse(response))
      } catch (e) {
        Queue.offerUnsafe(queue, { _tag: "Undecodable", detail: String(e) })
      }
      return 0
    }
    yield* Effect.acquireRelease(
      Effect.gen(function* () {
        // koffi's foreign-thread broker is unref'd: without a ref'd handle Node could exit while a DCGM
        // thread waits inside the callback. The session keeps the event loop alive while registered.
        keepAlive = setInterval(() => {}, 1 << 30)
        const ptr = koffi.register(onViolation, koffi.pointer(PolicyCallbackProto))
        const rc = yield* callAsync<number>(
          fns.dcgmPolicyRegister_v2,
          handle,
          DCGM_GROUP_ALL_GPUS,
          conditions,
          ptr,
          0
        )
        if (rc !== DcgmReturn.OK) {
          koffi.unregister(ptr)
          clearInterval(keepAlive)
          return yield* callFailed(fns, "dcgmPolicyRegister_v2", rc)
        }
        return ptr
      }),
      (ptr) =>
        unregisterPolicy(fns, handle, conditions, ptr).pipe(
          Effect.andThen(Queue.end(queue)),
          Effect.ensuring(Effect.sync(() => clearInterval(keepAlive)))
        )
    )

    // 3. field group + watches (GPUs; switches when there are any)
    const fieldIds = Uint16Array.from(WATCHED_FIELDS)
    const fieldGroup = yield* Effect.acquireRelease(
      Effect.gen(function* () {
        const out: Handle[] = [0]
        const name = `nodemend-${process.pid}-${++fieldGroupSerial}`
        const rc = yield* callAsync<number>(
          fns.dcgmFieldGroupCreate,
          handle,
          fieldIds.length,
          fieldIds,
          name,
          out
        )
        if (rc !== DcgmReturn.OK) return yield* callFailed(fns, "dcgmFieldGroupCreate", rc)
        return out[0]!
      }),
      (fg) => callAsync<number>(fns.dcgmFieldGroupDestroy, handle, fg)
    )
    const freq = options.updateFrequencyUs ?? 10_000_000
    const keep = options.maxKeepAgeSec ?? 600
    yield* Effect.acquireRelease(
      callAsync<number>(fns.dcgmWatchFields, handle, DCGM_GROUP_ALL_GPUS, fieldGroup, freq, keep, 0).pipe(
        Effect.flatMap(check(fns, "dcgmWatchFields"))
      ),
      () => callAsync<number>(fns.dcgmUnwatchFields, handle, DCGM_GROUP_ALL_GPUS, fieldGroup)
    )
    const switchRc = yield* callAsync<number>(
      fns.dcgmWatchFields,
      handle,
      DCGM_GROUP_ALL_NVSWITCHES,
      fieldGroup,
      freq,
      keep,
      0
    )
    const switchWatch =
      switchRc === DcgmReturn.OK
        ? { ok: true, detail: "watching NVSwitch fields" }
        : { ok: false, detail: `NVSwitch watch not set: ${errorText(fns, switchRc)} (${switchRc})` }
    if (switchWatch.ok)
      yield* Effect.addFinalizer(() =>
        callAsync<number>(fns.dcgmUnwatchFields, handle, DCGM_GROUP_ALL_NVSWITCHES, fieldGroup)
      )

    // 4. health watches on every system
    const healthRc = yield* callAsync<number>(
      fns.dcgmHealthSet,
      handle,
      DCGM_GROUP_ALL_GPUS,
      HealthSystem.ALL
    )
    if (healthRc !== DcgmReturn.OK) return yield* callFailed(fns, "dcgmHealthSet", healthRc)

    const gpuIds = Effect.gen(function* () {
      const list = new Uint32Array(DCGM_MAX_NUM_DEVICES)
      const count = [0]
      const rc = yield* callAsync<number>(fns.dcgmGetAllDevices, handle, list, count)
      yield* check(fns, "dcgmGetAllDevices")(rc)
      return Array.from(list.subarray(0, count[0]!))
    })

    const ping = Effect.gen(function* () {
      if (fns.dcgmHostengineIsHealthy !== undefined && target._tag === "Standalone") {
        const health = { version: StructVersion.hostengineHealth, overallHealth: 0 }
        const rc = yield* callAsync<number>(fns.dcgmHostengineIsHealthy, handle, health)
        yield* check(fns, "dcgmHostengineIsHealthy")(rc)
        if (health.overallHealth !== 0)
          return yield* new DcgmCallFailed({
            call: "dcgmHostengineIsHealthy",
            code: DcgmReturn.GENERIC_ERROR,
            detail: `host engine reports overallHealth ${health.overallHealth}`
          })
        return
      }
      const rc = yield* callAsync<number>(fns.dcgmUpdateAllFields, handle, 0)
      yield* check(fns, "dcgmUpdateAllFields")(rc)
    })

    const latest: DcgmSession["latest"] = (wanted, entities, opts) =>
      Effect.gen(function* () {
        const targets =
          entities ?? (yield* gpuIds).map((entityId) => ({ entityGroupId: EntityGroup.GPU, entityId }))
        if (targets.length === 0 || wanted.length === 0) return []
        const pairSize = koffi.sizeof(GroupEntityPair)
        const pairs = Buffer.alloc(pairSize * targets.length)
        targets.forEach((t, i) => {
          pairs.writeUInt32LE(t.entityGroupId, i * pairSize)
          pairs.writeUInt32LE(t.entityId, i * pairSize + 4)
        })
        const fields = Uint16Array.from(wanted)
        const n = targets.length * wanted.length
        const values = Buffer.alloc(FIELD_V2_SIZE * n)
        for (let i = 0; i < n; i++) values.writeUInt32LE(StructVersion.fieldValueV2, i * FIELD_V2_SIZE)
        const rc = yield* callAsync<number>(
          fns.dcgmEntitiesGetLatestValues,
          handle,
          pairs,
          targets.length,
          fields,
          fields.length,
          opts?.live ? 1 : 0,
          values
        )
        yield* check(fns, "dcgmEntitiesGetLatestValues")(rc)
        const out: FieldReading[] = []
        for (let i = 0; i < n; i++) {
          const base = i * FIELD_V2_SIZE
          const rec = koffi.decode(values, base, FieldValueV2) as {
            entityGroupId: number
            entityId: number
            fieldId: number
            fieldType: number
            status: number
            ts: number | bigint
          }
          out.push({
            entityGroupId: rec.entityGroupId,
            entityId: rec.entityId,
            fieldId: rec.fieldId,
            status: rec.status,
            timestampUs: Number(rec.ts),
            value: readValue(values, base + V2_VALUE, rec.fieldType)
          })
        }
        return out
      })

    const sinceGroup = (group: number, sinceUs: number) =>
      Effect.gen(function* () {
        const out: FieldReading[] = []
        const onValues = (entityGroupId: number, entityId: number, ptr: unknown, count: number): number => {
          try {
            for (let i = 0; i < count; i++) {
              const base = i * FIELD_V1_SIZE
              const rec = koffi.decode(ptr, base, FieldValueV1) as {
                fieldId: number
                fieldType: number
                status: number
                ts: number | bigint
              }
              out.push({
                entityGroupId,
                entityId,
                fieldId: rec.fieldId,
                status: rec.status,
                timestampUs: Number(rec.ts),
                value: readValue(ptr, base + V1_VALUE, rec.fieldType)
              })
            }
          } catch {
            return -1
          }
          return 0
        }
        const cb = koffi.register(onValues, koffi.pointer(FieldValueEntityEnumerationProto))
        const next = [0]
        // Unregistered when the call has returned (DCGM no longer holds the pointer), not when this fiber is
        // interrupted: unregistering under a running call would crash the process on DCGM's next callback.
        const rc = yield* callAsyncThen<number>(
          () => koffi.unregister(cb),
          fns.dcgmGetValuesSince_v2,
          handle,
          group,
          fieldGroup,
          sinceUs,
          next,
          cb,
          null
        )
        yield* check(fns, "dcgmGetValuesSince_v2")(rc)
        return out
      })

    const since: DcgmSession["since"] = (sinceUs) =>
      Effect.gen(function* () {
        const gpus = yield* sinceGroup(DCGM_GROUP_ALL_GPUS, sinceUs)
        if (!switchWatch.ok) return gpus
        return [...gpus, ...(yield* sinceGroup(DCGM_GROUP_ALL_NVSWITCHES, sinceUs))]
      })

    const healthSystems = Effect.gen(function* () {
      const out = [0]
      const rc = yield* callAsync<number>(fns.dcgmHealthGet, handle, DCGM_GROUP_ALL_GPUS, out)
      yield* check(fns, "dcgmHealthGet")(rc)
      return out[0]!
    })

    const healthCheck = Effect.gen(function* () {
      const buf = healthResponseBuffer()
      const rc = yield* callAsync<number>(fns.dcgmHealthCheck, handle, DCGM_GROUP_ALL_GPUS, buf)
      if (rc !== DcgmReturn.OK) return yield* callFailed(fns, "dcgmHealthCheck", rc)
      return yield* decodeResponse("dcgmHealthCheck", () => decodeHealthResponse(buf))
    })

    const runDiagnostic = (level: DiagLevel) =>
      Effect.gen(function* () {
        const fn = fns.dcgmRunDiagnostic
        if (fn === undefined)
          return yield* new DcgmCallFailed({
            call: "dcgmRunDiagnostic",
            code: -20, // DCGM_ST_FUNCTION_NOT_FOUND
            detail: `${fns.path} does not export dcgmRunDiagnostic`
          })
        const buf = diagResponseBuffer()
        const rc = yield* callAsync<number>(fn, handle, DCGM_GROUP_ALL_GPUS, DIAG_LEVELS[level], buf)
        if (rc !== DcgmReturn.OK) return yield* callFailed(fns, "dcgmRunDiagnostic", rc)
        return yield* decodeResponse("dcgmRunDiagnostic", () => decodeDiagResponse(buf))
      })

    return {
      target: targetName,
      violations: Stream.fromQueue(queue),
      gpuIds,
      ping,
      latest,
      since,
      healthSystems,
      healthCheck,
      runDiagnostic,
      switchWatch
    } satisfies DcgmSession
  })

/**
 * Unregisters the policy callback, retrying while a callback is running (DCGM_ST_IN_USE), and only then frees
 * the koffi trampoline: freeing it while DCGM may still call it would be a use-after-free in native code.
 * If DCGM never lets go, the trampoline is leaked on purpose.
 */
/** A response struct the call filled but that does not decode (counts past its arrays): a failed call. */
const decodeResponse = <A>(call: string, decode: () => A): Effect.Effect<A, DcgmCallFailed> =>
  Effect.try({
    try: decode,
    catch: (e) =>
      new DcgmCallFailed({
        call,
        code: DcgmReturn.GENERIC_ERROR,
        detail: `undecodable response: ${String(e)}`
      })
  })

/**
 * 10 ms of wall time for a DCGM thread still inside our callback to leave it. Deliberately not Clock: this
 * waits on a native thread, not on logical time, and under a TestClock a Clock sleep in a teardown would
 * never end (a test interrupting the monitor while a callback was finishing hung).
 */
const vendorThreadPause = Effect.callback<void>((resume) => {
  const timer = setTimeout(() => resume(Effect.void), 10)
  return Effect.sync(() => clearTimeout(timer))
})

const unregisterPolicy = (fns: DcgmFunctions, handle: Handle, conditions: number, ptr: bigint) =>
  Effect.gen(function* () {
    for (let attempt = 0; attempt < 500; attempt++) {
      const rc = yield* callAsync<number>(fns.dcgmPolicyUnregister, handle, DCGM_GROUP_ALL_GPUS, conditions)
      if (rc === DcgmReturn.IN_USE) {
        yield* vendorThreadPause
        continue
      }
      if (rc === DcgmReturn.OK || rc === DcgmReturn.CONNECTION_NOT_VALID) koffi.unregister(ptr)
      return
    }
  })
