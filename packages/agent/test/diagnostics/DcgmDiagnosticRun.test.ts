// A NodeDiagnostic's DCGM diagnostic (spec.dcgmDiagnostic, ADR 0019), served as main.ts wires it: on the NVIDIA
// monitor's own DCGM session (monitor.runDiagnostic), here against the C test double of libdcgm.so.4. Error codes
// and messages: NVIDIA/DCGM v4.6.0 dcgmlib/dcgm_errors.h.
import { describe, expect, it } from "@effect/vitest"
import { DCGM_SOFTWARE_INDEX } from "@nodemend/dcgm-native"
import { buildGpuDoubles, GpuDoubleInjector } from "@nodemend/dcgm-native/test-double"
import type { NodeDiagnostic } from "@nodemend/kube-access/NodeDiagnostic"
import { Effect, Layer, Schedule, Schema } from "effect"
import { beforeEach } from "vitest"
import { runDcgmDiagnostic } from "../../src/diagnostics/DcgmDiagnosticRun.ts"
import type { Finding } from "../../src/model.ts"
import { needsDcgmDiagnostic } from "../../src/diagnostics/NodeDiagnosticController.ts"
import { NvidiaLibraries } from "../../src/monitors/nvidia/libraries.ts"
import { makeNvidiaMonitor, type NvidiaMonitor } from "../../src/monitors/nvidia/monitor.ts"
import { NvidiaMonitorSettings } from "../../src/monitors/nvidia/settings.ts"
import { XidDeduplicator } from "../../src/monitors/nvidia/xid-deduplicator.ts"
import { hostWithGpus } from "../nvidia/gpu-host.ts"

const doubles = buildGpuDoubles()
const injector = new GpuDoubleInjector(doubles)
beforeEach(() => injector.reset())

const settings = Schema.decodeUnknownSync(NvidiaMonitorSettings)({
  dcgmLibraryPath: doubles.dcgm,
  nvmlLibraryPath: doubles.nvml,
  hostRoot: hostWithGpus(8)
})

/** The monitor with its DCGM session open (the on-demand diagnostic runs on it), for the body's duration. */
const withMonitor = <A, E>(body: (m: NvidiaMonitor) => Effect.Effect<A, E>, findings: Finding[] = []) =>
  Effect.gen(function* () {
    const monitor = yield* makeNvidiaMonitor(
      { settings },
      { findings: (fs) => Effect.sync(() => void findings.push(...fs)), status: () => Effect.void }
    )
    yield* Effect.forkScoped(monitor.run)
    const run = monitor.runDiagnostic
    expect(run).toBeDefined()
    // The session opens on the monitor's own fiber: until then the diagnostic says so.
    yield* run!(1).pipe(Effect.retry({ times: 100, schedule: Schedule.spaced("20 millis") }))
    return yield* body(monitor)
  }).pipe(
    Effect.scoped,
    Effect.provide(Layer.mergeAll(NvidiaLibraries.layer(settings), XidDeduplicator.layer))
  )

const SOFTWARE_FAIL = "A pending retired page has been detected in GPU 0."

describe("DCGM diagnostic on demand (NodeDiagnostic spec.dcgmDiagnostic)", () => {
  it.live(
    "a failed software test is Fail, naming the test, the GPU and DCGM's message; every result kept",
    () =>
      withMonitor((m) =>
        Effect.gen(function* () {
          injector.addDiagResult({
            testId: DCGM_SOFTWARE_INDEX,
            entityId: 0,
            result: 3,
            code: 6, // DCGM_FR_PENDING_PAGE_RETIREMENTS
            message: SOFTWARE_FAIL
          })
          injector.addDiagResult({ testId: DCGM_SOFTWARE_INDEX, entityId: 1, result: 0 })
          const out = yield* runDcgmDiagnostic(m.runDiagnostic, 1)
          expect(injector.lastDiagLevel()).toBe(10)
          expect(out.result).toBe("Fail")
          expect(out.message).toBe(`software test failed on GPU 0: ${SOFTWARE_FAIL}`)
          expect(out.tests).toEqual([
            {
              test: "software",
              testId: 15,
              entityGroupId: 1,
              entityId: 0,
              result: "Fail",
              errorCode: 6,
              errorMessage: SOFTWARE_FAIL
            },
            { test: "software", testId: 15, entityGroupId: 1, entityId: 1, result: "Pass" }
          ])
        })
      )
  )

  it.live(
    "a failed software test raises DCGMDiagnosticFailure on that GPU, as a periodic run does; a pass raises none",
    () => {
      const findings: Finding[] = []
      return withMonitor(
        (m) =>
          Effect.gen(function* () {
            injector.addDiagResult({ testId: DCGM_SOFTWARE_INDEX, entityId: 1, result: 0 })
            yield* runDcgmDiagnostic(m.runDiagnostic, 1)
            expect(findings.filter((f) => f.reason === "DCGMDiagnosticFailure")).toEqual([])
            injector.addDiagResult({
              testId: DCGM_SOFTWARE_INDEX,
              entityId: 0,
              result: 3,
              code: 6,
              message: SOFTWARE_FAIL
            })
            yield* runDcgmDiagnostic(m.runDiagnostic, 1)
            const raised = findings.filter((f) => f.reason === "DCGMDiagnosticFailure")
            expect(raised).toHaveLength(1)
            expect(raised[0]?._tag === "Detection" ? raised[0].message : "").toContain(SOFTWARE_FAIL)
          }),
        findings
      )
    }
  )

  it.live("no failed test is Pass, at the level asked; Warn and Skip are not failures", () =>
    withMonitor((m) =>
      Effect.gen(function* () {
        injector.addDiagResult({ testId: DCGM_SOFTWARE_INDEX, entityId: 0, result: 0 })
        injector.addDiagResult({ testId: 0, entityId: 0, result: 2, code: 1, message: "warned" })
        injector.addDiagResult({ testId: 2, entityId: 0, result: 1 })
        const out = yield* runDcgmDiagnostic(m.runDiagnostic, 2)
        expect(injector.lastDiagLevel()).toBe(20)
        expect(out.result).toBe("Pass")
        expect(out.tests?.map((t) => [t.test, t.result])).toEqual([
          ["software", "Pass"],
          ["memory", "Warn"],
          ["pcie", "Skip"]
        ])
      })
    )
  )

  it.live("DCGM reporting no result at all is Fail: nothing was shown healthy", () =>
    withMonitor((m) =>
      Effect.gen(function* () {
        const out = yield* runDcgmDiagnostic(m.runDiagnostic, 1)
        expect(out).toEqual({ result: "Fail", message: "DCGM reported no test result", tests: [] })
      })
    )
  )

  it.effect("a node without DCGM answers NotAvailable; a run DCGM refuses too, with DCGM's words", () =>
    Effect.gen(function* () {
      expect((yield* runDcgmDiagnostic(undefined, 1)).result).toBe("NotAvailable")
      const refused = yield* runDcgmDiagnostic(() => Effect.fail({ message: "dcgmRunDiagnostic: busy" }), 1)
      expect(refused).toEqual({
        result: "NotAvailable",
        message: "DCGM did not run the diagnostic: dcgmRunDiagnostic: busy"
      })
    })
  )
})

const nd = (generation: number, observedGeneration?: number): NodeDiagnostic =>
  ({
    metadata: { name: "n", generation },
    spec: { dcgmDiagnostic: { level: 1 } },
    ...(observedGeneration !== undefined
      ? {
          status: {
            dcgmDiagnostic: {
              completed: {
                result: "Pass",
                message: "",
                level: 1,
                startedAt: "t",
                finishedAt: "t",
                observedGeneration
              }
            }
          }
        }
      : {})
  }) as NodeDiagnostic

describe("needsDcgmDiagnostic", () => {
  it("runs for a new object or a newer generation, once per generation; not for a log capture alone", () => {
    expect(needsDcgmDiagnostic(nd(1))).toBe(true)
    expect(needsDcgmDiagnostic(nd(2, 1))).toBe(true)
    expect(needsDcgmDiagnostic(nd(1, 1))).toBe(false)
    expect(
      needsDcgmDiagnostic({
        metadata: { name: "n", generation: 1 },
        spec: { logCapture: { destination: "node" } }
      })
    ).toBe(false)
  })
})
