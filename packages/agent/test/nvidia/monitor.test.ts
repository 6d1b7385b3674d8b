// The NVIDIA monitor end to end against the C test doubles of libdcgm.so.4 / libnvidia-ml.so.1, with the
// TestClock driving grace periods, backoff and polls. Native calls complete in real time, so the test
// lets real time pass (TestClock.withLive) while it waits for their effects.
import { describe, expect, it } from "@effect/vitest"
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { FieldId, HealthResult, HealthSystem, NvmlEventType } from "@nodemend/dcgm-native"
import { buildGpuDoubles, GpuDoubleInjector } from "@nodemend/dcgm-native/test-double"
import { Context, type Duration, Effect, Fiber, Layer, Ref, Schema } from "effect"
import { TestClock } from "effect/testing"
import { beforeEach } from "vitest"
import type { Finding } from "../../src/model.ts"
import { NvidiaLibraries } from "../../src/monitors/nvidia/libraries.ts"
import type { NvidiaMonitorStatus } from "../../src/monitors/nvidia/monitor.ts"
import { NvidiaMonitorSettings } from "../../src/monitors/nvidia/settings.ts"
import { XidDeduplicator } from "../../src/monitors/nvidia/xid-deduplicator.ts"
import { recordProduced } from "../reasons/produced-reasons.ts"
import { POLICY_VIOLATIONS } from "../fixtures/dcgm-policy-violations.ts"
import { hostWithGpus } from "./gpu-host.ts"
import { runNvidiaMonitorScheduled } from "./run-monitor.ts"

const doubles = buildGpuDoubles()
const injector = new GpuDoubleInjector(doubles)

const settings = (over: Record<string, unknown> = {}) =>
  Schema.decodeUnknownSync(NvidiaMonitorSettings)({
    dcgmLibraryPath: doubles.dcgm,
    nvmlLibraryPath: doubles.nvml,
    hostRoot: hostWithGpus(8),
    ...over
  })

interface Harness {
  readonly findings: Ref.Ref<readonly Finding[]>
  readonly statuses: Ref.Ref<readonly NvidiaMonitorStatus[]>
}

const start = (
  s: NvidiaMonitorSettings,
  instanceType?: string,
  dedupe: Layer.Layer<XidDeduplicator> = XidDeduplicator.layer
) =>
  Effect.gen(function* () {
    const findings = yield* Ref.make<readonly Finding[]>([])
    const statuses = yield* Ref.make<readonly NvidiaMonitorStatus[]>([])
    const layers = Layer.mergeAll(NvidiaLibraries.layer(s), dedupe)
    const fiber = yield* runNvidiaMonitorScheduled(
      { settings: s, ...(instanceType === undefined ? {} : { instanceType }) },
      {
        findings: (fs) =>
          Ref.update(findings, (all) => [...all, ...fs]).pipe(
            Effect.tap(() => Effect.sync(() => recordProduced(fs)))
          ),
        status: (st) => Ref.update(statuses, (all) => [...all, st])
      }
    ).pipe(Effect.scoped, Effect.provide(layers), Effect.forkChild({ startImmediately: true }))
    return { findings, statuses, fiber }
  })

/** Lets real time pass until `pred` holds on the findings (native calls and pthreads run in real time). */
const untilFindings = (h: Harness, pred: (fs: readonly Finding[]) => boolean, what: string) =>
  Effect.promise(() =>
    waitFor(
      what,
      (seen) => {
        const fs = Effect.runSync(Ref.get(h.findings))
        seen(fs)
        return pred(fs)
      },
      { timeoutMs: 3000, intervalMs: 5 }
    )
  )
const settle = TestClock.withLive(Effect.sleep("60 millis"))
/**
 * Advances virtual time in steps until `pred` holds. Native calls finish in real time, so a single jump can
 * land before the monitor has scheduled its next sleep; stepping with a little real time in between cannot.
 */
const advanceUntil = (
  h: Harness,
  pred: (fs: readonly Finding[]) => boolean,
  step: Duration.Input,
  what: string
) =>
  Effect.gen(function* () {
    for (let i = 0; i < 200; i++) {
      if (pred(yield* Ref.get(h.findings))) return
      yield* TestClock.adjust(step)
      yield* TestClock.withLive(Effect.sleep("10 millis"))
    }
    throw new Error(
      `timed out advancing the clock for ${what}: ${JSON.stringify(yield* Ref.get(h.findings))}`
    )
  })
/** The first poll lands within the startup jitter (20 % of the poll interval; 300 s by default). */
const firstPoll = (h: Harness) =>
  advanceUntil(h, has("NvidiaDeviceCountMismatch", "Resolution"), "5 seconds", "first poll")
const has =
  (reason: string, tag: Finding["_tag"] = "Detection") =>
  (fs: readonly Finding[]) =>
    fs.some((f) => f.reason === reason && f._tag === tag)

beforeEach(() => {
  injector.reset()
  injector.setGpuCount(8)
  injector.nvmlSetDeviceCount(8)
})

describe("NVIDIA monitor", () => {
  it.effect("not watching when neither library exists: one status, no findings, no condition", () =>
    Effect.gen(function* () {
      const h = yield* start(
        settings({
          dcgmLibraryPath: "/nonexistent/libdcgm.so.4",
          nvmlLibraryPath: "/nonexistent/libnvidia-ml.so.1"
        })
      )
      yield* Fiber.join(h.fiber)
      const statuses = yield* Ref.get(h.statuses)
      expect(statuses).toHaveLength(1)
      expect(statuses[0]).toMatchObject({ _tag: "NotWatching" })
      expect((statuses[0] as { reason: string }).reason).toContain("library missing")
      expect(yield* Ref.get(h.findings)).toEqual([])
    })
  )

  it.effect("push path: a DBE fired from a foreign thread becomes NvidiaDoubleBitError", () =>
    Effect.gen(function* () {
      const h = yield* start(settings())
      yield* untilFindings(h, () => injector.registrationCount() === 1, "policy registration")
      injector.firePolicy({ condition: "DBE", gpuId: 3, location: 2, numerrors: 1 })
      yield* untilFindings(h, has("NvidiaDoubleBitError"), "DBE detection")
      const dbe = (yield* Ref.get(h.findings)).find((f) => f.reason === "NvidiaDoubleBitError")
      expect(dbe).toMatchObject({
        severity: "Condition",
        conditionType: "AcceleratedHardwareReady",
        message: "detected 1 Nvidia Double Bit error(s) on location Device",
        subject: "gpu3"
      })
      yield* Fiber.interrupt(h.fiber)
    })
  )

  it.effect(
    "push path: every dcgmPolicyCondition_t bit becomes its catalog reason, severity and message",
    () =>
      Effect.gen(function* () {
        const h = yield* start(settings())
        yield* untilFindings(h, () => injector.registrationCount() === 1, "policy registration")
        for (const v of POLICY_VIOLATIONS) injector.firePolicy(v.fire)
        yield* untilFindings(
          h,
          (fs) => POLICY_VIOLATIONS.every((v) => has(v.reason)(fs)),
          "a detection per violation type"
        )
        const fs = yield* Ref.get(h.findings)
        for (const v of POLICY_VIOLATIONS)
          expect(
            fs.find((f) => f.reason === v.reason),
            v.fire.condition
          ).toMatchObject({
            severity: v.severity,
            conditionType: "AcceleratedHardwareReady",
            message: v.message,
            subject: `gpu${v.fire.gpuId}`
          })
        yield* Fiber.interrupt(h.fiber)
      })
  )

  it.effect(
    "XIDs: fatal -> Error, others -> Warning; the kernel line of the same XID on the same GPU is deduplicated",
    () =>
      Effect.gen(function* () {
        injector.setGpuCount(1)
        injector.injectString({ entityId: 0, fieldId: FieldId.PCI_BUS_ID, value: "00000000:2A:00.0" })
        const ctx = yield* Layer.build(XidDeduplicator.layer)
        const dedupe = Context.get(ctx, XidDeduplicator)
        const h = yield* start(settings({ hostRoot: hostWithGpus(1) }), undefined, Layer.succeedContext(ctx))
        yield* untilFindings(h, () => injector.registrationCount() === 1, "policy registration")
        const firedAtUs = Date.now() * 1000
        injector.firePolicy({ condition: "XID", gpuId: 0, errnum: 79 }, firedAtUs)
        injector.firePolicy({ condition: "XID", gpuId: 0, errnum: 13 }, firedAtUs)
        yield* untilFindings(
          h,
          (fs) => has("NvidiaXID79Error")(fs) && has("NvidiaXID13Warning")(fs),
          "XID detections"
        )
        const xid79 = (yield* Ref.get(h.findings)).find((f) => f.reason === "NvidiaXID79Error")
        expect(xid79).toMatchObject({ severity: "Condition", subject: "0000:2a:00" })
        expect((yield* Ref.get(h.findings)).find((f) => f.reason === "NvidiaXID13Warning")).toMatchObject({
          severity: "Event"
        })
        // What the rules engine makes of `NVRM: Xid (PCI:0000:2a:00): 79, pid=..., ...` two seconds later:
        const kernelLine = (xid: number, atMs: number) => ({
          _tag: "Detection" as const,
          monitor: "nvidia" as const,
          reason: xid === 79 ? "NvidiaXID79Error" : "NvidiaXID48Error",
          conditionType: "AcceleratedHardwareReady" as const,
          severity: "Condition" as const,
          message: "detected XID",
          observedAtMs: atMs,
          subject: "0000:2a:00"
        })
        const firedMs = Math.floor(firedAtUs / 1000)
        expect(yield* dedupe.admitDetection(kernelLine(79, firedMs + 2000))).toBe(false)
        expect(yield* dedupe.admitDetection(kernelLine(48, firedMs + 2000))).toBe(true)
        expect(yield* dedupe.admitDetection(kernelLine(79, firedMs + 6000))).toBe(true)
        yield* Fiber.interrupt(h.fiber)
      })
  )

  it.effect(
    "health check: FAIL incident -> DCGMHealthCode condition on the GPU's PCI address, WARN -> Event, 122 skipped, cleared FAIL resolves",
    () =>
      Effect.gen(function* () {
        injector.injectString({ entityId: 3, fieldId: FieldId.PCI_BUS_ID, value: "00000000:3B:00.0" })
        const h = yield* start(settings({ pollSeconds: 300 }))
        yield* firstPoll(h)
        // dcgm_errors.h v4.6.0: 4 DCGM_FR_VOLATILE_DBE_DETECTED, 14 DCGM_FR_NVLINK_DOWN, 122 DCGM_FR_IMEX_UNHEALTHY
        injector.addHealthIncident({
          system: HealthSystem.MEM,
          health: HealthResult.FAIL,
          code: 4,
          message: "Detected 1 volatile double-bit ECC error(s) in GPU 3.",
          entityId: 3
        })
        injector.addHealthIncident({
          system: HealthSystem.NVLINK,
          health: HealthResult.WARN,
          code: 14,
          message: "GPU 2's NvLink link 5 is currently down",
          entityId: 2
        })
        injector.addHealthIncident({
          system: HealthSystem.DRIVER,
          health: HealthResult.FAIL,
          code: 122,
          message: "IMEX daemon status is UNAVAILABLE (not running)",
          entityId: 0
        })
        yield* advanceUntil(h, has("DCGMHealthCode4"), "300 seconds", "the next health check")
        const fs = yield* Ref.get(h.findings)
        expect(fs.find((f) => f.reason === "DCGMHealthCode4")).toMatchObject({
          severity: "Condition",
          subject: "0000:3b:00",
          message:
            "DCGM detected issues in health check system with error code 4: Detected 1 volatile double-bit ECC error(s) in GPU 3."
        })
        expect(fs.find((f) => f.reason === "DCGMHealthCode14")).toMatchObject({
          severity: "Event",
          subject: "gpu2"
        })
        expect(fs.some((f) => f.reason === "DCGMHealthCode122")).toBe(false)
        injector.clearHealthIncidents()
        yield* advanceUntil(h, has("DCGMHealthCode4", "Resolution"), "300 seconds", "the resolution")
        yield* Fiber.interrupt(h.fiber)
      })
  )

  it.effect(
    "active diagnostics: off by default; at level 1 a software FAIL raises DCGMDiagnosticFailure",
    () =>
      Effect.gen(function* () {
        // dcgm_errors.h v4.6.0: 6 = DCGM_FR_PENDING_PAGE_RETIREMENTS (DCGM_FR_PENDING_PAGE_RETIREMENTS_MSG)
        injector.addDiagResult({
          testId: 15,
          entityId: 5,
          result: 3,
          code: 6,
          message: "A pending retired page has been detected in GPU 5."
        })
        const off = yield* start(settings())
        yield* firstPoll(off)
        yield* settle
        expect(injector.lastDiagLevel()).toBe(0)
        yield* Fiber.interrupt(off.fiber)

        const h = yield* start(settings({ diagLevel: 1 }))
        yield* advanceUntil(h, has("DCGMDiagnosticFailure"), "5 seconds", "the diagnostic")
        expect(injector.lastDiagLevel()).toBe(10)
        expect((yield* Ref.get(h.findings)).find((f) => f.reason === "DCGMDiagnosticFailure")).toMatchObject({
          severity: "Condition",
          subject: "gpu5",
          message:
            "DCGM Diagnostic failed for test software with error: A pending retired page has been detected in GPU 5."
        })
        yield* Fiber.interrupt(h.fiber)
      })
  )

  it.effect("NVML only: polled findings name the GPU by its PCI bus id", () =>
    Effect.gen(function* () {
      injector.nvmlSetPci(0, { domain: 0, bus: 0x2a, device: 0 })
      // reference section 3.7 / DCGM's tests: 0x19A = ROUTE_UNHEALTHY TRUE, everything else healthy
      injector.nvmlSetFabric(0, { state: 3, status: 0, cliqueId: 1, healthMask: 0x19a, healthSummary: 2 })
      const h = yield* start(settings({ dcgmLibraryPath: "/nonexistent/libdcgm.so.4" }))
      yield* advanceUntil(h, has("NvidiaFabricError"), "5 seconds", "the NVML poll")
      expect((yield* Ref.get(h.findings)).find((f) => f.reason === "NvidiaFabricError")).toMatchObject({
        subject: "0000:2a:00"
      })
      yield* Fiber.interrupt(h.fiber)
    })
  )

  it.effect(
    "XID 154: the GPU's recovery action from NVML field 230 becomes its reason; absent field, none",
    () =>
      Effect.gen(function* () {
        injector.nvmlSetPci(0, { domain: 0, bus: 0x2a, device: 0 })
        injector.nvmlSetRecoveryAction(0, 2) // NODE_REBOOT
        // a driver before R570 on GPU 1: the field is NOT_SUPPORTED, which is absent, not an error
        injector.nvmlSetRecoveryAction(1, 1, { perValueReturn: 3 })
        const h = yield* start(settings())
        let delivered = 0
        for (let i = 0; i < 200 && delivered === 0; i++) {
          delivered = injector.nvmlPostEvent(0, NvmlEventType.XidCriticalError, 154)
          if (delivered === 0) yield* TestClock.withLive(Effect.sleep("10 millis"))
        }
        expect(delivered).toBeGreaterThan(0)
        yield* untilFindings(h, has("NvidiaNodeRebootRequired"), "the recovery action after XID 154")
        const fs = yield* Ref.get(h.findings)
        expect(fs.find((f) => f.reason === "NvidiaXID154Warning")).toBeDefined()
        expect(
          fs.filter((f) => f.reason.startsWith("NvidiaGPU") || f.reason === "NvidiaNodeRebootRequired")
        ).toEqual([expect.objectContaining({ reason: "NvidiaNodeRebootRequired", subject: "0000:2a:00" })])
        yield* Fiber.interrupt(h.fiber)
      })
  )

  it.effect("NVML XIDs carry the PCI bus id: deduplicated against kernel lines by (PCI, XID)", () =>
    Effect.gen(function* () {
      injector.nvmlSetPci(0, { domain: 0, bus: 0x2a, device: 0 })
      const ctx = yield* Layer.build(XidDeduplicator.layer)
      const dedupe = Context.get(ctx, XidDeduplicator)
      const h = yield* start(settings(), undefined, Layer.succeedContext(ctx))
      // the event set registers asynchronously: post until a set receives it
      let delivered = 0
      for (let i = 0; i < 200 && delivered === 0; i++) {
        delivered = injector.nvmlPostEvent(0, NvmlEventType.XidCriticalError, 79)
        if (delivered === 0) yield* TestClock.withLive(Effect.sleep("10 millis"))
      }
      expect(delivered).toBeGreaterThan(0)
      yield* untilFindings(h, has("NvidiaXID79Error"), "the NVML XID")
      const xid = (yield* Ref.get(h.findings)).find((f) => f.reason === "NvidiaXID79Error")
      expect(xid).toMatchObject({ subject: "0000:2a:00" })
      const atMs = xid!.observedAtMs
      const kernelLine = (pci: string) => ({
        _tag: "Detection" as const,
        monitor: "nvidia" as const,
        reason: "NvidiaXID79Error",
        conditionType: "AcceleratedHardwareReady" as const,
        severity: "Condition" as const,
        message: "detected XID",
        observedAtMs: atMs + 1000,
        subject: pci
      })
      // NVRM: Xid (PCI:0000:2a:00): 79 on the same GPU is the same fault; on another GPU it is a new one
      expect(yield* dedupe.admitDetection(kernelLine("0000:2a:00"))).toBe(false)
      expect(yield* dedupe.admitDetection(kernelLine("0000:2b:00"))).toBe(true)
      yield* Fiber.interrupt(h.fiber)
    })
  )

  it.effect(
    "polled path: healthy 0x1AA raises nothing; FM status 4 raises FabricManagerNotRunning; 7 of 8 GPUs is a mismatch",
    () =>
      Effect.gen(function* () {
        const h = yield* start(settings({ pollSeconds: 300 }), "p5.48xlarge")
        yield* firstPoll(h)
        injector.injectField({ entityId: 0, fieldId: FieldId.FABRIC_HEALTH_MASK, value: 0x1aa })
        injector.injectField({ entityId: 1, fieldId: FieldId.FABRIC_MANAGER_STATUS, value: 4 })
        injector.setGpuCount(7)
        injector.nvmlSetDeviceCount(7)
        yield* Ref.set(h.findings, [])
        yield* advanceUntil(h, has("NvidiaDeviceCountMismatch"), "300 seconds", "second poll")
        const fs = yield* Ref.get(h.findings)
        // one verdict per poll that ran (stepping the clock can let a second poll in before the check): all
        // of them Resolutions, never a Detection
        const fabric = fs.filter((f) => f.reason === "NvidiaFabricError")
        expect(fabric.length).toBeGreaterThan(0)
        expect(fabric.filter((f) => f._tag !== "Resolution")).toEqual([])
        expect(
          fs.find((f) => f.reason === "FabricManagerNotRunning" && f._tag === "Detection")
        ).toMatchObject({
          message: "Fabric Manager status: Failure",
          subject: "gpu1"
        })
        expect(fs.find((f) => f.reason === "NvidiaDeviceCountMismatch")).toMatchObject({
          _tag: "Detection",
          message:
            "DCGM detected 7 GPUs but 8 nvidia device files were detected; expected 8 GPUs for p5.48xlarge but only 7 were detected — possible hardware failure"
        })
        yield* Fiber.interrupt(h.fiber)
      })
  )

  it.effect("windowed samples (SXid, XID history) are reported once, not again on every poll", () =>
    Effect.gen(function* () {
      const h = yield* start(settings({ pollSeconds: 10, windowSeconds: 300 }))
      yield* firstPoll(h)
      const now = Date.now() * 1000
      injector.injectField({
        entityGroupId: 3,
        entityId: 1,
        fieldId: FieldId.SXID_FATAL_ERROR,
        value: 12028,
        timestampUs: now
      })
      injector.injectField({ entityId: 2, fieldId: FieldId.XID_ERROR, value: 13, timestampUs: now })
      yield* advanceUntil(h, has("DCGMFieldError856"), "10 seconds", "the poll after the injection")
      // three more polls, each proven by its device-count verdict (a poll that never ran would prove nothing)
      const polls = (fs: readonly Finding[]) =>
        fs.filter((f) => f.reason === "NvidiaDeviceCountMismatch").length
      for (let i = 0; i < 3; i++) {
        const before = polls(yield* Ref.get(h.findings))
        yield* advanceUntil(h, (fs) => polls(fs) > before, "10 seconds", `poll ${i + 2} after the injection`)
      }
      const fs = yield* Ref.get(h.findings)
      expect(fs.filter((f) => f.reason === "DCGMFieldError856")).toHaveLength(1)
      expect(fs.filter((f) => f.reason === "NvidiaXID13Warning")).toHaveLength(1)
      yield* Fiber.interrupt(h.fiber)
    })
  )

  it.effect(
    "connection refused: DCGMError only after the grace period, resolved when the host engine is back",
    () =>
      Effect.gen(function* () {
        injector.refuseConnections(true)
        const h = yield* start(
          settings({ graceSeconds: 60, reconnectInitialSeconds: 1, reconnectMaxSeconds: 10 })
        )
        for (let t = 0; t < 55; t += 5) {
          yield* TestClock.adjust("5 seconds")
          yield* settle
        }
        expect((yield* Ref.get(h.findings)).filter((f) => f.reason === "DCGMError")).toEqual([])
        yield* advanceUntil(h, has("DCGMError"), "5 seconds", "DCGMError after grace")
        const raised = (yield* Ref.get(h.findings)).filter((f) => f.reason === "DCGMError")
        expect(raised).toHaveLength(1)
        expect(raised[0]).toMatchObject({ severity: "Condition" })
        expect((raised[0] as { message: string }).message).toBe(
          "DCGM: connection refused: localhost:5555: Host engine connection invalid/disconnected (-21)"
        )
        injector.refuseConnections(false)
        yield* advanceUntil(h, has("DCGMError", "Resolution"), "1 seconds", "DCGMError resolution")
        yield* Fiber.interrupt(h.fiber)
      })
  )

  it.effect("a dropped connection is reopened within the grace period without DCGMError", () =>
    Effect.gen(function* () {
      const h = yield* start(settings({ healthCheckSeconds: 30, graceSeconds: 60 }))
      yield* untilFindings(h, () => injector.registrationCount() === 1, "policy registration")
      injector.dropConnections()
      expect(injector.registrationCount()).toBe(0) // the old registration died with its connection
      yield* TestClock.adjust("30 seconds") // health check fails -> session torn down -> backoff -> reconnect
      yield* advanceUntil(h, () => injector.registrationCount() === 1, "1 seconds", "re-registration")
      injector.firePolicy({ condition: "NVLINK", gpuId: 0, fieldId: 409, counter: 1 })
      yield* untilFindings(h, has("NvidiaNVLinkError"), "NVLink detection on the new session")
      expect((yield* Ref.get(h.findings)).filter((f) => f.reason === "DCGMError")).toEqual([])
      yield* Fiber.interrupt(h.fiber)
    })
  )
})
