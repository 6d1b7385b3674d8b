// The DCGM service against the C test double (libdcgm.so.4 built from test/double at test time).
// Fixture values: shared/reference/dcgm-nvml.md section 8 (DCGM's own test_policy.py values).
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import { DcgmReturn, EntityGroup, FieldId, HealthSystem } from "../src/constants.ts"
import { Dcgm } from "../src/dcgm.ts"
import { GpuDoubleInjector } from "./double/injector.ts"
import { DcgmDouble, doubles, injector, resetDoublesBeforeEach, standalone, withSession } from "./session.ts"

resetDoublesBeforeEach()

describe("library loading", () => {
  it.live("a missing library is LibraryMissing", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        Layer.build(Dcgm.layer("/nonexistent/libdcgm.so.4")).pipe(Effect.scoped)
      )
      expect(Exit.isFailure(exit)).toBe(true)
      const err = yield* Effect.flip(Layer.build(Dcgm.layer("/nonexistent/libdcgm.so.4")).pipe(Effect.scoped))
      expect(err._tag).toBe("LibraryMissing")
      expect(err.message).toContain("library missing")
    })
  )
  it.live("a DCGM 3.x library (no dcgmPolicyRegister_v2) is VersionMismatch", () =>
    Effect.gen(function* () {
      const err = yield* Effect.flip(Layer.build(Dcgm.layer(doubles.dcgm3)).pipe(Effect.scoped))
      expect(err._tag).toBe("VersionMismatch")
      expect(err.message).toContain("DCGM 3.x")
    })
  )
})

describe("connections", () => {
  it.live("standalone over TCP and over a unix socket", () =>
    Effect.gen(function* () {
      const dcgm = yield* Dcgm
      yield* Effect.scoped(dcgm.connect(standalone))
      expect(injector.lastAddress()).toEqual({ address: "127.0.0.1:5555", unixSocket: false })
      const s = yield* Effect.scoped(
        dcgm.connect({ _tag: "Standalone", address: "/run/nvidia/nv-hostengine", unixSocket: true })
      )
      expect(s.target).toBe("unix:///run/nvidia/nv-hostengine")
      expect(injector.lastAddress()).toEqual({ address: "/run/nvidia/nv-hostengine", unixSocket: true })
    }).pipe(Effect.provide(DcgmDouble))
  )
  it.live("embedded mode", () =>
    Effect.gen(function* () {
      const dcgm = yield* Dcgm
      const ids = yield* Effect.scoped(
        dcgm.connect({ _tag: "Embedded" }).pipe(Effect.flatMap((s) => s.gpuIds))
      )
      expect(ids).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
    }).pipe(Effect.provide(DcgmDouble))
  )
  it.live("a refused connection is ConnectionRefused", () =>
    Effect.gen(function* () {
      injector.refuseConnections(true)
      const dcgm = yield* Dcgm
      const err = yield* Effect.flip(Effect.scoped(dcgm.connect(standalone)))
      expect(err._tag).toBe("ConnectionRefused")
      if (err._tag === "ConnectionRefused") expect(err.code).toBe(DcgmReturn.CONNECTION_NOT_VALID)
    }).pipe(Effect.provide(DcgmDouble))
  )
  it.live("a dropped connection fails ping and reads with the DCGM code", () =>
    withSession((s) =>
      Effect.gen(function* () {
        yield* s.ping
        injector.dropConnections()
        const err = yield* Effect.flip(s.ping)
        expect(err._tag).toBe("DcgmCallFailed")
        if (err._tag === "DcgmCallFailed") expect(err.code).toBe(DcgmReturn.CONNECTION_NOT_VALID)
        const err2 = yield* Effect.flip(s.gpuIds)
        expect(err2.code).toBe(DcgmReturn.CONNECTION_NOT_VALID)
      })
    )
  )
  it.live("device count follows the double", () =>
    withSession((s) =>
      Effect.gen(function* () {
        injector.setGpuCount(7)
        expect((yield* s.gpuIds).length).toBe(7)
      })
    )
  )
  it.live("health watches are set on every system", () =>
    withSession((s) => s.healthSystems.pipe(Effect.map((h) => expect(h >>> 0).toBe(HealthSystem.ALL))))
  )
})

describe("policy violations (push path, fired from a foreign pthread)", () => {
  it.live("decodes every condition with the vendor fixture values", () =>
    withSession((s) =>
      Effect.gen(function* () {
        const collected = yield* s.violations.pipe(Stream.take(7), Stream.runCollect, Effect.forkChild)
        yield* Effect.yieldNow
        const ts = 1_700_000_000_000_000
        injector.firePolicy({ condition: "DBE", gpuId: 0, location: 2, numerrors: 1 }, ts)
        injector.firePolicy({ condition: "PCI", gpuId: 1, counter: 1 }, ts)
        injector.firePolicy({ condition: "MPR", gpuId: 2, sbepages: 10, dbepages: 10 }, ts)
        injector.firePolicy({ condition: "THERMAL", gpuId: 3, thermalViolation: 95 }, ts)
        injector.firePolicy({ condition: "POWER", gpuId: 4, powerViolation: 210 }, ts)
        injector.firePolicy({ condition: "NVLINK", gpuId: 5, fieldId: 409, counter: 1 }, ts)
        injector.firePolicy({ condition: "XID", gpuId: 6, errnum: 16 }, ts)
        const got = yield* Fiber.join(collected)
        const byTag = Object.fromEntries(got.map((v) => [v._tag, v]))
        expect(byTag.DoubleBitEcc).toEqual({
          _tag: "DoubleBitEcc",
          gpuId: 0,
          timestampUs: ts,
          location: "Device",
          errors: 1
        })
        expect(byTag.PcieReplay).toEqual({ _tag: "PcieReplay", gpuId: 1, timestampUs: ts, counter: 1 })
        expect(byTag.RetiredPages).toEqual({
          _tag: "RetiredPages",
          gpuId: 2,
          timestampUs: ts,
          sbePages: 10,
          dbePages: 10
        })
        expect(byTag.Thermal).toEqual({ _tag: "Thermal", gpuId: 3, timestampUs: ts, temperatureC: 95 })
        expect(byTag.Power).toEqual({ _tag: "Power", gpuId: 4, timestampUs: ts, watts: 210 })
        expect(byTag.NvLink).toEqual({ _tag: "NvLink", gpuId: 5, timestampUs: ts, fieldId: 409, counter: 1 })
        expect(byTag.Xid).toEqual({ _tag: "Xid", gpuId: 6, timestampUs: ts, xid: 16 })
      })
    )
  )
  it.live("XIDs 79/48/94/95/119 arrive with their number", () =>
    withSession((s) =>
      Effect.gen(function* () {
        const collected = yield* s.violations.pipe(Stream.take(5), Stream.runCollect, Effect.forkChild)
        yield* Effect.yieldNow
        for (const xid of [79, 48, 94, 95, 119])
          injector.firePolicy({ condition: "XID", gpuId: 2, errnum: xid })
        const got = yield* Fiber.join(collected)
        expect(got.map((v) => (v._tag === "Xid" ? v.xid : -1)).sort((a, b) => a - b)).toEqual([
          48, 79, 94, 95, 119
        ])
      })
    )
  )
  it.live(
    "teardown with a callback in flight completes (unregister retries IN_USE off the main thread)",
    () =>
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const dcgm = yield* Dcgm
        yield* dcgm.connect(standalone).pipe(Scope.provide(scope))
        expect(injector.registrationCount()).toBe(1)
        injector.firePolicy({ condition: "XID", gpuId: 0, errnum: 79 })
        // The firing thread is now blocked until the JS main thread runs the callback; closing the scope must
        // not wait for it on the main thread (that would deadlock).
        yield* Scope.close(scope, Exit.void)
        expect(injector.registrationCount()).toBe(0)
        expect(injector.callbacksInFlight()).toBe(0)
      }).pipe(Effect.provide(DcgmDouble))
  )
  it.live("library shutdown with a callback in flight does not deadlock", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const ctx = yield* Layer.buildWithScope(DcgmDouble, scope)
      const dcgm = Context.get(ctx, Dcgm)
      yield* dcgm.connect(standalone).pipe(Scope.provide(scope))
      injector.firePolicy({ condition: "DBE", gpuId: 0, location: 2, numerrors: 1 })
      yield* Scope.close(scope, Exit.void)
      expect(injector.callbacksInFlight()).toBe(0)
    })
  )
})

describe("field values (polled path)", () => {
  it.live("latest values: healthy 0x1AA as BigInt, blanks, unwatched fields", () =>
    withSession((s) =>
      Effect.gen(function* () {
        injector.injectField({ entityId: 0, fieldId: FieldId.FABRIC_HEALTH_MASK, value: 0x1aa })
        injector.injectField({
          entityId: 0,
          fieldId: FieldId.FABRIC_MANAGER_STATUS,
          value: GpuDoubleInjector.blank(2)
        })
        injector.injectField({
          entityId: 0,
          fieldId: FieldId.CLOCKS_EVENT_REASONS,
          value: 0,
          status: DcgmReturn.NOT_SUPPORTED
        })
        const got = yield* s.latest(
          [
            FieldId.FABRIC_HEALTH_MASK,
            FieldId.FABRIC_MANAGER_STATUS,
            FieldId.CLOCKS_EVENT_REASONS,
            FieldId.GPU_TEMP
          ],
          [{ entityGroupId: EntityGroup.GPU, entityId: 0 }]
        )
        const by = new Map(got.map((r) => [r.fieldId, r]))
        expect(by.get(FieldId.FABRIC_HEALTH_MASK)?.value).toEqual({ _tag: "Int", value: 0x1aan })
        expect(by.get(FieldId.FABRIC_MANAGER_STATUS)?.value).toEqual({ _tag: "Blank", kind: "NotSupported" })
        expect(by.get(FieldId.CLOCKS_EVENT_REASONS)?.status).toBe(DcgmReturn.NOT_SUPPORTED)
        expect(by.get(FieldId.GPU_TEMP)?.status).toBe(DcgmReturn.NOT_WATCHED)
      })
    )
  )
  it.live("values since a timestamp: XID history and NVSwitch SXids", () =>
    withSession((s) =>
      Effect.gen(function* () {
        const now = Date.now() * 1000
        injector.injectField({
          entityId: 1,
          fieldId: FieldId.XID_ERROR,
          value: 79,
          timestampUs: now - 600_000_000
        })
        injector.injectField({
          entityId: 1,
          fieldId: FieldId.XID_ERROR,
          value: 48,
          timestampUs: now - 60_000_000
        })
        injector.injectField({
          entityId: 1,
          fieldId: FieldId.XID_ERROR,
          value: 63,
          timestampUs: now - 30_000_000
        })
        injector.injectField({
          entityGroupId: EntityGroup.SWITCH,
          entityId: 0,
          fieldId: FieldId.SXID_FATAL_ERROR,
          value: 12028,
          timestampUs: now - 1_000_000
        })
        const got = yield* s.since(now - 300_000_000)
        expect(got.filter((r) => r.fieldId === FieldId.XID_ERROR).map((r) => r.value)).toEqual([
          { _tag: "Int", value: 48n },
          { _tag: "Int", value: 63n }
        ])
        const sxid = got.find((r) => r.fieldId === FieldId.SXID_FATAL_ERROR)
        expect(sxid?.entityGroupId).toBe(EntityGroup.SWITCH)
        expect(sxid?.value).toEqual({ _tag: "Int", value: 12028n })
      })
    )
  )

  it.live("an interrupted history read returns at once; its callback lives until DCGM returns", () =>
    withSession((s) =>
      Effect.gen(function* () {
        const now = Date.now() * 1000
        injector.injectField({
          entityId: 2,
          fieldId: FieldId.XID_ERROR,
          value: 79,
          timestampUs: now - 1_000_000
        })
        injector.setValuesSinceDelayMs(300) // a slow host engine: the callback comes 300 ms into the call
        const fiber = yield* Effect.forkChild(s.since(now - 60_000_000))
        yield* Effect.sleep("50 millis")
        const started = Date.now()
        yield* Fiber.interrupt(fiber)
        // the caller is not held for the native call (300 ms)
        expect(Date.now() - started).toBeLessThan(250)
        // DCGM now calls back: into a callback still registered (an unregistered one kills the process)
        yield* Effect.sleep("400 millis")
        injector.setValuesSinceDelayMs(0)
        const got = yield* s.since(now - 60_000_000)
        expect(got.filter((r) => r.fieldId === FieldId.XID_ERROR).map((r) => r.value)).toEqual([
          { _tag: "Int", value: 79n }
        ])
      })
    )
  )
})
