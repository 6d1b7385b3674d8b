/**
 * The accelerated-hardware (NVIDIA) monitor. Push path: DCGM policy violations and NVML XID events become
 * findings as they arrive. Polled path (every poll interval, over the look-back window): fabric health mask,
 * Fabric Manager status, clock event reasons, NVSwitch SXids, XID history, device counts, and the DCGM health
 * check; the polls are checks of the agent's scheduler (scheduled-polls.ts), not fibers of their own. The DCGM
 * session is supervised: reconnect with capped exponential backoff, DCGMError only after the grace period, resolved
 * when a session is healthy again. With neither library present the monitor is not watching: it reports
 * that status once (the runtime logs it and records one Event) and emits no findings at all.
 */
import {
  type DcgmApi,
  type DcgmCallFailed,
  type DcgmSession,
  type DcgmTarget,
  type DiagLevel,
  type DiagReport,
  EntityGroup,
  FieldId,
  type FieldReading,
  NvmlEventType,
  type NvmlApi,
  type VersionMismatch
} from "@nodemend/dcgm-native"
import { Cause, Clock, Duration, Effect, Option, Ref, Schedule, type Scope, Stream } from "effect"
import type { Finding } from "../../model.ts"
import type { PeriodicCheck } from "../../scheduler/periodic-check.ts"
import { startupJitterMs } from "../../scheduler/scheduler.ts"
import {
  connected,
  connectionFailed,
  type DcgmConnectionState,
  initialConnection
} from "./dcgm-connection.ts"
import { type DeviceCounts, deviceCountMismatch } from "./device-count.ts"
import { nvidiaDetection, nvidiaResolution, xidDetection } from "./findings.ts"
import { diagnosticFindings } from "./diag-findings.ts"
import { type FailingIncident, healthCheckFindings } from "./health-findings.ts"
import { countDeviceFiles, countNvidiaPciGpus } from "./host-devices.ts"
import { INSTANCE_GPU_COUNTS } from "./instance-gpu-counts.ts"
import { NvidiaLibraries } from "./libraries.ts"
import {
  clockReasonFinding,
  defaultSubject,
  fabricManagerFindings,
  fabricMaskFindings,
  fmStatusFromNvml,
  polledFindings
} from "./polled-findings.ts"
import { nvidiaPoll } from "./scheduled-polls.ts"
import type { NvidiaMonitorSettings } from "./settings.ts"
import { violationDetection } from "./violation-findings.ts"
import { recoveryActionFindings } from "./recovery-action.ts"
import { XidDeduplicator } from "./xid-deduplicator.ts"
import { normalizePci } from "./xid-dedupe.ts"

export type NvidiaMonitorStatus =
  | { readonly _tag: "NotWatching"; readonly reason: string }
  | { readonly _tag: "Watching"; readonly dcgm: boolean; readonly nvml: boolean; readonly detail: string }

export interface NvidiaMonitorSinks {
  readonly findings: (findings: readonly Finding[]) => Effect.Effect<void>
  readonly status: (status: NvidiaMonitorStatus) => Effect.Effect<void>
}

export interface NvidiaMonitorContext {
  readonly settings: NvidiaMonitorSettings
  /** From the node label `node.kubernetes.io/instance-type`, when known. */
  readonly instanceType?: string
}

const targetOf = (s: NvidiaMonitorSettings): DcgmTarget =>
  s.dcgm.mode === "embedded"
    ? { _tag: "Embedded" }
    : {
        _tag: "Standalone",
        address: s.dcgm.address,
        unixSocket: s.dcgm.unixSocket,
        timeoutMs: Math.round(s.dcgm.connectTimeoutSeconds * 1000)
      }

const ms = (seconds: number) => Duration.millis(Math.round(seconds * 1000))

export interface NvidiaMonitor {
  /** The periodic polls, for the agent's one scheduler (startup jitter, shared queue: scheduled-polls.ts). */
  readonly checks: readonly PeriodicCheck[]
  /** The push paths and the DCGM session's supervision: runs until interrupted (returns at once when not watching). */
  readonly run: Effect.Effect<void, never, Scope.Scope>
  /**
   * A DCGM active diagnostic on demand (a NodeDiagnostic's `dcgmDiagnostic`), on the monitor's open session; fails
   * while none is open. Absent without DCGM.
   */
  readonly runDiagnostic?: (level: DiagLevel) => Effect.Effect<DiagReport, { readonly message: string }>
}

/** The DCGM session's polls while one is open; the scheduler's checks run them (nothing while none is). */
interface SessionPolls {
  readonly poll: Effect.Effect<void, DcgmCallFailed>
  readonly health: Effect.Effect<void, DcgmCallFailed | VersionMismatch>
  readonly diagnose: DcgmSession["runDiagnostic"]
}

export const makeNvidiaMonitor = (
  ctx: NvidiaMonitorContext,
  sinks: NvidiaMonitorSinks
): Effect.Effect<NvidiaMonitor, never, NvidiaLibraries | XidDeduplicator> =>
  Effect.gen(function* () {
    const libs = yield* NvidiaLibraries
    const dedupe = yield* XidDeduplicator
    const settings = ctx.settings
    if (libs.dcgm === undefined && libs.nvml === undefined) {
      yield* sinks.status({ _tag: "NotWatching", reason: `no NVIDIA library: ${libs.problems.join("; ")}` })
      return { checks: [], run: Effect.void }
    }
    yield* sinks.status({
      _tag: "Watching",
      dcgm: libs.dcgm !== undefined,
      nvml: libs.nvml !== undefined,
      detail: libs.problems.length === 0 ? "DCGM and NVML loaded" : `degraded: ${libs.problems.join("; ")}`
    })

    const emit = (fs: readonly Finding[]) => (fs.length === 0 ? Effect.void : sinks.findings(fs))
    const nvmlPci = libs.nvml === undefined ? undefined : nvmlPciOf(libs.nvml)
    const emitXid = (xid: number, pci: string | undefined, atMs: number, subject: string) =>
      Effect.gen(function* () {
        if (!(yield* dedupe.admit({ xid, pci, atMs }))) return
        yield* emit([xidDetection(xid, atMs, subject)])
        // XID 154: the driver changed a GPU's recovery action; NVML names it (field 230) where it offers it.
        if (xid === GPU_RECOVERY_ACTION_CHANGED && libs.nvml !== undefined && nvmlPci !== undefined)
          yield* emit(yield* readRecoveryActions(libs.nvml, nvmlPci, atMs))
      })
    const dcgmCount = yield* Ref.make<number | undefined>(undefined)
    const session = yield* Ref.make<SessionPolls | undefined>(undefined)

    const expected = () => {
      const t = ctx.instanceType
      if (t === undefined) return undefined
      const count = settings.expectedGpuCounts[t] ?? INSTANCE_GPU_COUNTS.get(t)
      return count === undefined ? undefined : { instanceType: t, count }
    }
    const checkDeviceCount = Effect.gen(function* () {
      const counts: { -readonly [K in keyof DeviceCounts]: DeviceCounts[K] } = {}
      const files = yield* countDeviceFiles(settings.hostRoot)
      if (files !== undefined) counts.deviceFiles = files
      const nvml =
        libs.nvml === undefined
          ? undefined
          : Option.getOrUndefined(yield* Effect.option(libs.nvml.deviceCount))
      if (nvml !== undefined) counts.nvml = nvml
      const dcgm = yield* Ref.get(dcgmCount)
      if (dcgm !== undefined) counts.dcgm = dcgm
      const pci = yield* countNvidiaPciGpus(settings.hostRoot)
      if (pci !== undefined) counts.pciDevices = pci
      const exp = expected()
      if (exp !== undefined) counts.expected = exp
      const now = yield* Clock.currentTimeMillis
      const detail = deviceCountMismatch(counts)
      yield* emit([
        detail === undefined
          ? nvidiaResolution("NvidiaDeviceCountMismatch", now)
          : nvidiaDetection("NvidiaDeviceCountMismatch", detail, now)
      ])
    })

    const pollMs = Math.round(settings.pollSeconds * 1000)
    const checks: PeriodicCheck[] = []
    const forks: Effect.Effect<unknown, never, Scope.Scope>[] = []
    if (libs.dcgm !== undefined) {
      checks.push(
        nvidiaPoll(
          "nvidia-dcgm-poll",
          pollMs,
          Effect.flatMap(Ref.get(session), (p) => p?.poll ?? Effect.void)
        ),
        nvidiaPoll(
          "nvidia-dcgm-health",
          pollMs,
          Effect.flatMap(Ref.get(session), (p) => p?.health ?? Effect.void)
        )
      )
      forks.push(superviseDcgm(libs.dcgm, settings, emit, emitXid, dcgmCount, checkDeviceCount, session))
    }
    if (libs.nvml !== undefined) {
      const nvml = libs.nvml
      const pciOf = nvmlPci ?? nvmlPciOf(nvml)
      forks.push(nvmlXidEvents(nvml, pciOf, emitXid))
      // Without DCGM, NVML is the polled source too.
      if (libs.dcgm === undefined)
        checks.push(
          nvidiaPoll(
            "nvidia-nvml-poll",
            pollMs,
            Effect.andThen(nvmlPoll(nvml, pciOf, emit), checkDeviceCount)
          )
        )
    }
    const run = Effect.gen(function* () {
      for (const f of forks) yield* Effect.forkScoped(f)
      return yield* Effect.never
    })
    if (libs.dcgm === undefined) return { checks, run }
    const runDiagnostic = (level: DiagLevel) =>
      Effect.flatMap(Ref.get(session), (p) =>
        p === undefined
          ? Effect.fail({ message: "no DCGM session is open (the host engine is not reachable)" })
          : p.diagnose(level)
      )
    return { checks, run, runDiagnostic }
  })

type Emit = (fs: readonly Finding[]) => Effect.Effect<void>
type EmitXid = (xid: number, pci: string | undefined, atMs: number, subject: string) => Effect.Effect<void>

/** PCI address per DCGM gpuId (field 57), for subjects and XID matching with kernel lines. */
const gpuPciMap = (session: DcgmSession) =>
  session.latest([FieldId.PCI_BUS_ID], undefined, { live: true }).pipe(
    Effect.map((rs) => {
      const m = new Map<number, string>()
      for (const r of rs) {
        const pci = r.value._tag === "String" ? normalizePci(r.value.value) : undefined
        if (pci !== undefined) m.set(r.entityId, pci)
      }
      return m
    }),
    Effect.orElseSucceed(() => new Map<number, string>())
  )

const superviseDcgm = (
  dcgm: DcgmApi,
  settings: NvidiaMonitorSettings,
  emit: Emit,
  emitXid: EmitXid,
  dcgmCount: Ref.Ref<number | undefined>,
  checkDeviceCount: Effect.Effect<void>,
  current: Ref.Ref<SessionPolls | undefined>
) =>
  Effect.gen(function* () {
    const graceMs = settings.graceSeconds * 1000
    const state = yield* Ref.make<DcgmConnectionState>(initialConnection(yield* Clock.currentTimeMillis))
    const transition = (
      f: (s: DcgmConnectionState, now: number) => { state: DcgmConnectionState; findings: readonly Finding[] }
    ) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const t = f(yield* Ref.get(state), now)
        yield* Ref.set(state, t.state)
        yield* emit(t.findings)
      })
    const target = targetOf(settings)
    let failures = 0
    // FAIL health incidents raised so far: kept across sessions so one that clears while DCGM is away resolves
    const failingHealth = yield* Ref.make<readonly FailingIncident[]>([])

    const session = Effect.scoped(
      Effect.gen(function* () {
        const s = yield* dcgm.connect(target)
        yield* s.ping
        failures = 0
        yield* transition((st, now) => connected(st, now))
        const pci = yield* gpuPciMap(s)
        const subjectOf = (group: number, id: number) =>
          group === EntityGroup.GPU ? (pci.get(id) ?? defaultSubject(group, id)) : defaultSubject(group, id)

        // push path
        yield* Effect.forkScoped(
          Stream.runForEach(s.violations, (v) =>
            v._tag === "Undecodable"
              ? Effect.logWarning("undecodable DCGM policy violation", { detail: v.detail })
              : v._tag === "Xid"
                ? emitXid(
                    v.xid,
                    pci.get(v.gpuId),
                    Math.floor(v.timestampUs / 1000),
                    subjectOf(EntityGroup.GPU, v.gpuId)
                  )
                : emit([violationDetection(v, subjectOf(EntityGroup.GPU, v.gpuId))])
          )
        )
        // polled path
        // Samples already evaluated by an earlier poll are not reported again (a poll interval shorter than
        // the window would otherwise repeat the same SXid / clock / XID Events every poll).
        const seenUpToUs = yield* Ref.make(0)
        const poll = Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          yield* Ref.set(dcgmCount, (yield* s.gpuIds).length)
          const latest = yield* s.latest([FieldId.FABRIC_MANAGER_STATUS, FieldId.FABRIC_HEALTH_MASK])
          const seen = yield* Ref.get(seenUpToUs)
          const sample = yield* s.since(Math.max((now - settings.windowSeconds * 1000) * 1000, seen + 1))
          const window = sample.filter((r) => r.timestampUs > seen)
          if (window.length > 0)
            yield* Ref.set(seenUpToUs, Math.max(seen, ...window.map((r) => r.timestampUs)))
          yield* emit(polledFindings({ latest, window }, now, subjectOf))
          for (const r of window) yield* xidFromHistory(r, pci, subjectOf, emitXid)
          yield* checkDeviceCount
        })
        // health system (watches set on every system when the session opened): a check of its own, so a check
        // DCGM refuses (e.g. NOT_SUPPORTED) costs neither the field poll nor the session
        const health = Effect.gen(function* () {
          const report = yield* s.healthCheck
          const now = yield* Clock.currentTimeMillis
          const r = healthCheckFindings(report, yield* Ref.get(failingHealth), now, subjectOf)
          yield* Ref.set(failingHealth, r.failing)
          yield* emit(r.findings)
        })
        // A diagnostic asked on demand (a NodeDiagnostic's dcgmDiagnostic) raises what a periodic run raises: a
        // failed software test is DCGMDiagnosticFailure on that GPU, so the node is repaired by the same policy.
        const diagnoseOnDemand = (level: DiagLevel) =>
          s
            .runDiagnostic(level)
            .pipe(
              Effect.tap((report) =>
                Effect.flatMap(Clock.currentTimeMillis, (now) =>
                  emit(diagnosticFindings(report, now, subjectOf).findings)
                )
              )
            )
        // Both run as the scheduler's checks (scheduled-polls.ts) while this session is open.
        yield* Effect.acquireRelease(Ref.set(current, { poll, health, diagnose: diagnoseOnDemand }), () =>
          Ref.set(current, undefined)
        )
        // active diagnostics, off unless configured: a run holds a koffi worker for its whole duration, and
        // the next starts a poll interval after the last one ended (runs never overlap).
        const level = settings.diagLevel
        if (level !== 0) {
          const diagnose = Effect.gen(function* () {
            const report = yield* s.runDiagnostic(level)
            const now = yield* Clock.currentTimeMillis
            const r = diagnosticFindings(report, now, subjectOf)
            if (r.otherFailures.length > 0)
              yield* Effect.logWarning("DCGM diagnostic: non-software tests failed (not raised)", {
                failures: r.otherFailures.map(
                  (f) => `${f.testName} on ${subjectOf(f.entityGroupId, f.entityId)}: ${f.errorMessage ?? ""}`
                )
              })
            yield* emit(r.findings)
          }).pipe(
            Effect.catch((e) => Effect.logWarning("DCGM diagnostic failed to run", { error: e.message }))
          )
          // Not in the scheduler's queue (a run holds it for minutes), but jittered like it: a fleet's runs
          // do not start together.
          const offsetMs = yield* startupJitterMs(Math.round(settings.pollSeconds * 1000))
          yield* Effect.forkScoped(
            diagnose.pipe(
              Effect.repeat(scheduleSpaced(settings.pollSeconds)),
              Effect.delay(Duration.millis(offsetMs))
            )
          )
        }
        // liveness: the session ends (and is reopened) on the first failed check
        yield* s.ping.pipe(
          Effect.repeat(scheduleSpaced(settings.healthCheckSeconds)),
          Effect.delay(ms(settings.healthCheckSeconds))
        )
      })
    )

    while (true) {
      const exit = yield* Effect.exit(session)
      if (exit._tag === "Failure") {
        const message = exitMessage(exit.cause)
        yield* transition((st, now) => connectionFailed(st, message, now, graceMs))
        yield* Ref.set(dcgmCount, undefined)
      }
      const delay = Math.min(
        settings.reconnectMaxSeconds,
        settings.reconnectInitialSeconds * 2 ** Math.min(failures, 20)
      )
      failures++
      yield* Effect.sleep(ms(delay))
    }
  })

const scheduleSpaced = (seconds: number) => Schedule.spaced(ms(seconds))

/** DCGMError's message: the typed error's own text (connection refused, call failed, version mismatch). */
const exitMessage = (cause: Cause.Cause<unknown>): string => {
  const e = Cause.squash(cause)
  return `DCGM: ${e instanceof Error ? e.message : String(e)}`
}

const xidFromHistory = (
  r: FieldReading,
  pci: ReadonlyMap<number, string>,
  subjectOf: (g: number, id: number) => string,
  emitXid: EmitXid
) =>
  r.fieldId === FieldId.XID_ERROR && r.status === 0 && r.value._tag === "Int"
    ? emitXid(
        Number(r.value.value),
        pci.get(r.entityId),
        Math.floor(r.timestampUs / 1000),
        subjectOf(r.entityGroupId, r.entityId)
      )
    : Effect.void

/**
 * PCI address per NVML device index (nvmlDeviceGetPciInfo_v3), remembered once known, so NVML XIDs name
 * their GPU the way `NVRM: Xid (PCI:...)` kernel lines and DCGM (field 57) do. A failed lookup is not
 * remembered: the next XID or poll asks again rather than leaving the GPU unnamed for the agent's life.
 */
const nvmlPciOf = (nvml: NvmlApi) => {
  const known = new Map<number, string>()
  return (index: number): Effect.Effect<string | undefined> => {
    const pci = known.get(index)
    return pci !== undefined
      ? Effect.succeed(pci)
      : nvml.pciInfo(index).pipe(
          Effect.map((p) => normalizePci(p.busId)),
          Effect.tap((pci) =>
            Effect.sync(() => {
              if (pci !== undefined) known.set(index, pci)
            })
          ),
          Effect.orElseSucceed(() => undefined)
        )
  }
}

type PciOf = ReturnType<typeof nvmlPciOf>

const GPU_RECOVERY_ACTION_CHANGED = 154

/**
 * Every GPU's recovery action: XID 154 from DCGM or a kernel line may not say which NVML index it is, and a
 * GPU whose action is NONE yields nothing. A driver without the field (Absent) or a failed read yields nothing.
 */
const readRecoveryActions = (nvml: NvmlApi, pciOf: PciOf, atMs: number) =>
  Effect.gen(function* () {
    const n = yield* nvml.deviceCount.pipe(Effect.orElseSucceed(() => 0))
    const out: Finding[] = []
    for (let i = 0; i < n; i++) {
      const reading = yield* nvml.gpuRecoveryAction(i).pipe(Effect.option)
      if (reading._tag === "None" || reading.value._tag === "Absent") continue
      out.push(...recoveryActionFindings(reading.value.value, atMs, (yield* pciOf(i)) ?? `gpu${i}`))
    }
    return out
  })

const nvmlXidEvents = (nvml: NvmlApi, pciOf: PciOf, emitXid: EmitXid) =>
  Effect.gen(function* () {
    yield* nvml.events(NvmlEventType.XidCriticalError).pipe(
      Stream.runForEach((e) =>
        e.eventType === NvmlEventType.XidCriticalError
          ? pciOf(e.deviceIndex).pipe(
              Effect.flatMap((pci) =>
                emitXid(Number(e.eventData), pci, e.observedAtMs, pci ?? `gpu${e.deviceIndex}`)
              )
            )
          : Effect.void
      ),
      Effect.catch((err) => Effect.logWarning("NVML event wait stopped", { error: err.message }))
    )
  })

/** The polled path from NVML alone (no DCGM): fabric info and clock event reasons per device. */
const nvmlPoll = (nvml: NvmlApi, pciOf: PciOf, emit: Emit) =>
  Effect.gen(function* () {
    const n = yield* nvml.deviceCount.pipe(Effect.orElseSucceed(() => 0))
    const now = yield* Clock.currentTimeMillis
    const out: Finding[] = []
    for (let i = 0; i < n; i++) {
      const subject = (yield* pciOf(i)) ?? `gpu${i}`
      const fabric = yield* nvml.fabricInfo(i).pipe(Effect.option)
      if (fabric._tag === "Some") {
        out.push(fabricMaskFindings(fabric.value.healthMask, now, subject))
        out.push(
          ...fabricManagerFindings(fmStatusFromNvml(fabric.value.state, fabric.value.status), now, subject)
        )
      }
      const clock = yield* nvml.clockEventReasons(i).pipe(Effect.option)
      if (clock._tag === "Some") {
        const f = clockReasonFinding(clock.value, 0, now, subject)
        if (f !== undefined) out.push(f)
      }
    }
    yield* emit(out)
  })
