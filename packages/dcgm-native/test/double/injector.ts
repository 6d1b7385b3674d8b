/**
 * Drives the C test doubles from a test: the vendor injection API (dcgmInjectFieldValue,
 * dcgmEntityInjectFieldValue) and the nmdouble_* controls. It loads the same library file as the code
 * under test, so both share the double's state (one dlopen per process).
 */
import koffi, { type LibraryHandle } from "koffi"
import { FieldType } from "../../src/constants.ts"
import { FieldValueV1, PolicyCallbackResponse, StructVersion } from "../../src/layouts.ts"
import type { GpuDoubles } from "./build.ts"

const BLANK = 0x7ffffffffffffff0n

export type PolicyFire =
  | {
      readonly condition: "DBE"
      readonly gpuId: number
      readonly location: number
      readonly numerrors: number
    }
  | { readonly condition: "PCI"; readonly gpuId: number; readonly counter: number }
  | {
      readonly condition: "MPR"
      readonly gpuId: number
      readonly sbepages: number
      readonly dbepages: number
    }
  | { readonly condition: "THERMAL"; readonly gpuId: number; readonly thermalViolation: number }
  | { readonly condition: "POWER"; readonly gpuId: number; readonly powerViolation: number }
  | {
      readonly condition: "NVLINK"
      readonly gpuId: number
      readonly fieldId: number
      readonly counter: number
    }
  | { readonly condition: "XID"; readonly gpuId: number; readonly errnum: number }

const CONDITION_BITS = {
  DBE: 0x1,
  PCI: 0x2,
  MPR: 0x4,
  THERMAL: 0x8,
  POWER: 0x10,
  NVLINK: 0x20,
  XID: 0x40
} as const
const UNION_MEMBER = {
  DBE: "dbe",
  PCI: "pci",
  MPR: "mpr",
  THERMAL: "thermal",
  POWER: "power",
  NVLINK: "nvlink",
  XID: "xid"
} as const

export class GpuDoubleInjector {
  private readonly dcgm: LibraryHandle
  private readonly nvml: LibraryHandle
  private readonly f: Record<string, ReturnType<LibraryHandle["func"]>>

  constructor(doubles: GpuDoubles) {
    this.dcgm = koffi.load(doubles.dcgm)
    this.nvml = koffi.load(doubles.nvml)
    const d = this.dcgm
    const n = this.nvml
    this.f = {
      init: d.func("dcgmInit", "int", []),
      connect: d.func("dcgmConnect_v2", "int", [
        "const char *",
        "void *",
        koffi.out(koffi.pointer("uintptr_t"))
      ]),
      disconnect: d.func("dcgmDisconnect", "int", ["uintptr_t"]),
      inject: d.func("dcgmEntityInjectFieldValue", "int", [
        "uintptr_t",
        "uint32_t",
        "uint32_t",
        koffi.pointer(FieldValueV1)
      ]),
      reset: d.func("nmdouble_reset", "void", []),
      setGpuCount: d.func("nmdouble_set_gpu_count", "void", ["int"]),
      refuse: d.func("nmdouble_refuse_connections", "void", ["int"]),
      valuesSinceDelay: d.func("nmdouble_set_values_since_delay_ms", "void", ["uint32_t"]),
      drop: d.func("nmdouble_drop_connections", "void", []),
      lastAddress: d.func("nmdouble_last_address", "const char *", []),
      lastUnixSocket: d.func("nmdouble_last_unix_socket", "uint32_t", []),
      inFlight: d.func("nmdouble_callbacks_in_flight", "int", []),
      registrations: d.func("nmdouble_registration_count", "int", []),
      fire: d.func("nmdouble_fire_policy", "int", [koffi.pointer(PolicyCallbackResponse)]),
      watchFifo: d.func("nmdouble_watch_policy_fifo", "int", ["const char *"]),
      addIncident: d.func("nmdouble_add_health_incident", "int", [
        "uint32_t",
        "uint32_t",
        "uint32_t",
        "const char *",
        "uint32_t",
        "uint32_t"
      ]),
      clearIncidents: d.func("nmdouble_clear_health_incidents", "void", []),
      addDiag: d.func("nmdouble_add_diag_result", "int", [
        "uint32_t",
        "uint32_t",
        "uint32_t",
        "uint32_t",
        "uint32_t",
        "const char *"
      ]),
      lastDiagLevel: d.func("nmdouble_last_diag_level", "uint32_t", []),
      nvmlReset: n.func("nmdouble_nvml_reset", "void", []),
      nvmlCount: n.func("nmdouble_nvml_set_device_count", "void", ["uint32_t"]),
      nvmlOldDriver: n.func("nmdouble_nvml_set_old_driver", "void", ["int"]),
      nvmlClock: n.func("nmdouble_nvml_set_clock_reasons", "void", ["uint32_t", "uint64_t"]),
      nvmlFabric: n.func("nmdouble_nvml_set_fabric", "void", [
        "uint32_t",
        "uint8_t",
        "int",
        "uint32_t",
        "uint32_t",
        "uint8_t",
        "int"
      ]),
      nvmlRemap: n.func("nmdouble_nvml_set_remapped_rows", "void", [
        "uint32_t",
        "uint32_t",
        "uint32_t",
        "uint32_t",
        "uint32_t",
        "int"
      ]),
      nvmlPage: n.func("nmdouble_nvml_add_retired_page", "void", [
        "uint32_t",
        "uint32_t",
        "uint64_t",
        "uint64_t"
      ]),
      nvmlPci: n.func("nmdouble_nvml_set_pci", "void", ["uint32_t", "uint32_t", "uint32_t", "uint32_t"]),
      nvmlEvent: n.func("nmdouble_nvml_post_event", "int", ["uint32_t", "uint64_t", "uint64_t"]),
      nvmlRecovery: n.func("nmdouble_nvml_set_recovery_action", "void", ["uint32_t", "uint32_t", "int"])
    }
  }

  reset(): void {
    this.f.reset!()
    this.f.nvmlReset!()
  }
  setGpuCount(n: number): void {
    this.f.setGpuCount!(n)
  }
  /** dcgmGetValuesSince_v2 waits this long before calling back (a slow host engine). */
  setValuesSinceDelayMs(ms: number): void {
    this.f.valuesSinceDelay!(ms)
  }
  refuseConnections(on: boolean): void {
    this.f.refuse!(on ? 1 : 0)
  }
  /** nv-hostengine went away: every open connection now returns DCGM_ST_CONNECTION_NOT_VALID. */
  dropConnections(): void {
    this.f.drop!()
  }
  lastAddress(): { address: string; unixSocket: boolean } {
    return {
      address: this.f.lastAddress!() as string,
      unixSocket: (this.f.lastUnixSocket!() as number) === 1
    }
  }
  callbacksInFlight(): number {
    return this.f.inFlight!() as number
  }
  registrationCount(): number {
    return this.f.registrations!() as number
  }

  /** Fires a policy violation from a new pthread inside the double; returns before the callback runs. */
  firePolicy(v: PolicyFire, timestampUs: number = Date.now() * 1000): void {
    const { condition, gpuId, ...rest } = v
    const response = {
      version: StructVersion.policyCallbackResponse,
      condition: CONDITION_BITS[condition],
      val: { [UNION_MEMBER[condition]]: { timestamp: timestampUs, ...rest } },
      gpuId
    }
    const rc = this.f.fire!(response) as number
    if (rc !== 0) throw new Error(`nmdouble_fire_policy failed: ${rc}`)
  }

  /**
   * Starts the double's control channel on `path` in this process (what NMDOUBLE_DCGM_POLICY_FIFO does at
   * dcgmInit): other processes then write violations with control.ts. Once per process: 0 started, 1 already.
   */
  watchPolicyFifo(path: string): number {
    const rc = this.f.watchFifo!(path) as number
    if (rc < 0) throw new Error(`nmdouble_watch_policy_fifo(${path}) failed`)
    return rc
  }

  /** Injects one sample through the vendor API (dcgmEntityInjectFieldValue), like DCGM's own tests do. */
  injectField(opts: {
    readonly entityGroupId?: number
    readonly entityId: number
    readonly fieldId: number
    readonly value: number | bigint
    readonly status?: number
    readonly timestampUs?: number
  }): void {
    this.injectFieldValue(opts.entityGroupId ?? 1, opts.entityId, {
      version: StructVersion.fieldValueV1,
      fieldId: opts.fieldId,
      fieldType: FieldType.INT64,
      status: opts.status ?? 0,
      ts: opts.timestampUs ?? Date.now() * 1000,
      value: { i64: opts.value }
    })
  }

  /** Injects a string sample (e.g. DCGM_FI_DEV_PCI_BUS_ID, field 57). */
  injectString(opts: {
    readonly entityId: number
    readonly fieldId: number
    readonly value: string
    readonly timestampUs?: number
  }): void {
    this.injectFieldValue(1, opts.entityId, {
      version: StructVersion.fieldValueV1,
      fieldId: opts.fieldId,
      fieldType: FieldType.STRING,
      status: 0,
      ts: opts.timestampUs ?? Date.now() * 1000,
      value: { str: opts.value }
    })
  }

  /** One dcgmEntityInjectFieldValue call on a connection of its own (dcgmConnect_v2 ... dcgmDisconnect). */
  private injectFieldValue(entityGroupId: number, entityId: number, fv: object): void {
    this.f.init!()
    const out = [0]
    const params = Buffer.alloc(16)
    params.writeUInt32LE(StructVersion.connectV2Params, 0)
    const rc = this.f.connect!("injector", params, out) as number
    if (rc !== 0) throw new Error(`injector connect failed: ${rc}`)
    const irc = this.f.inject!(out[0], entityGroupId, entityId, fv) as number
    this.f.disconnect!(out[0])
    if (irc !== 0) throw new Error(`dcgmEntityInjectFieldValue failed: ${irc}`)
  }

  /**
   * Adds a current health incident, reported by every dcgmHealthCheck while its system is watched, until
   * `clearHealthIncidents`. `health`: dcgmHealthWatchResults_t (10 WARN, 20 FAIL); `code`: dcgmError_t.
   */
  addHealthIncident(i: {
    readonly system: number
    readonly health: number
    readonly code: number
    readonly message: string
    readonly entityGroupId?: number
    readonly entityId: number
  }): void {
    const rc = this.f.addIncident!(i.system, i.health, i.code, i.message, i.entityGroupId ?? 1, i.entityId)
    if (rc !== 0) throw new Error("nmdouble_add_health_incident: table full")
  }
  clearHealthIncidents(): void {
    this.f.clearIncidents!()
  }

  /**
   * One per-entity result of the next dcgmRunDiagnostic calls (until reset). `result`: dcgmDiagResult_t
   * (0 pass, 1 skip, 2 warn, 3 fail, 4 not run); a non-empty `message` also adds an errors[] entry.
   */
  addDiagResult(d: {
    readonly testId: number
    readonly entityGroupId?: number
    readonly entityId: number
    readonly result: number
    readonly code?: number
    readonly message?: string
  }): void {
    const rc = this.f.addDiag!(
      d.testId,
      d.entityGroupId ?? 1,
      d.entityId,
      d.result,
      d.code ?? 0,
      d.message ?? ""
    )
    if (rc !== 0) throw new Error("nmdouble_add_diag_result: table full")
  }
  /** The dcgmDiagnosticLevel_t of the last dcgmRunDiagnostic (0 when none ran). */
  lastDiagLevel(): number {
    return this.f.lastDiagLevel!() as number
  }

  /** An int64 blank sentinel: 0 BLANK, 1 NOT_FOUND, 2 NOT_SUPPORTED, 3 NOT_PERMISSIONED. */
  static blank(offset: 0 | 1 | 2 | 3): bigint {
    return BLANK + BigInt(offset)
  }

  nvmlSetDeviceCount(n: number): void {
    this.f.nvmlCount!(n)
  }
  nvmlSetOldDriver(on: boolean): void {
    this.f.nvmlOldDriver!(on ? 1 : 0)
  }
  nvmlSetClockReasons(index: number, mask: bigint | number): void {
    this.f.nvmlClock!(index, mask)
  }
  nvmlSetFabric(
    index: number,
    f: {
      state: number
      status: number
      cliqueId: number
      healthMask: number
      healthSummary: number
      callReturn?: number
    }
  ): void {
    this.f.nvmlFabric!(index, f.state, f.status, f.cliqueId, f.healthMask, f.healthSummary, f.callReturn ?? 0)
  }
  nvmlSetRemappedRows(
    index: number,
    r: { corr: number; unc: number; pending: number; failure: number; callReturn?: number }
  ): void {
    this.f.nvmlRemap!(index, r.corr, r.unc, r.pending, r.failure, r.callReturn ?? 0)
  }
  nvmlAddRetiredPage(index: number, cause: 0 | 1, address: bigint, timestamp: bigint): void {
    this.f.nvmlPage!(index, cause, address, timestamp)
  }
  /** The device's PCI address as nvmlDeviceGetPciInfo_v3 reports it (default: bus 0x10 + index). */
  nvmlSetPci(index: number, pci: { domain: number; bus: number; device: number }): void {
    this.f.nvmlPci!(index, pci.domain, pci.bus, pci.device)
  }
  /** Queues an NVML event on every event set registered for it; returns how many sets received it. */
  /**
   * Field 230 (GPU recovery action) of a device. `perValueReturn` answers in the value's nvmlReturn (a driver
   * before R570: NOT_SUPPORTED); `callReturn` fails the whole nvmlDeviceGetFieldValues call.
   */
  nvmlSetRecoveryAction(
    index: number,
    action: number,
    r: { perValueReturn?: number; callReturn?: number } = {}
  ): void {
    this.f.nvmlRecovery!(index, action, r.callReturn ? -r.callReturn : (r.perValueReturn ?? 0))
  }
  nvmlPostEvent(index: number, eventType: bigint, eventData: bigint | number): number {
    return this.f.nvmlEvent!(index, eventType, eventData) as number
  }
}
