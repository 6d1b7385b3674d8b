// dcgmRunDiagnostic against the C test double, and decoding of dcgmDiagResponse_v12 (read as go-dcgm's RunDiag
// reads it). Error codes and messages: NVIDIA/DCGM v4.6.0 dcgmlib/dcgm_errors.h.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import koffi from "koffi"
import { DCGM_SOFTWARE_INDEX, decodeDiagResponse, diagResponseBuffer } from "../src/diag-response.ts"
import { DiagResponseV12 } from "../src/layouts.ts"
import { injector, resetDoublesBeforeEach, withSession } from "./session.ts"

resetDoublesBeforeEach()

describe("dcgmRunDiagnostic", () => {
  it.live("level 1..4 maps to dcgmDiagnosticLevel_t 10..40; results decode with their errors", () =>
    withSession((s) =>
      Effect.gen(function* () {
        injector.addDiagResult({ testId: DCGM_SOFTWARE_INDEX, entityId: 0, result: 0 })
        injector.addDiagResult({
          testId: DCGM_SOFTWARE_INDEX,
          entityId: 5,
          result: 3,
          code: 6, // DCGM_FR_PENDING_PAGE_RETIREMENTS
          message: "A pending retired page has been detected in GPU 5."
        })
        injector.addDiagResult({ testId: 0, entityId: 5, result: 1 })
        const report = yield* s.runDiagnostic(1)
        expect(injector.lastDiagLevel()).toBe(10)
        expect(report.results).toEqual([
          {
            entityGroupId: 1,
            entityId: 0,
            testId: 15,
            testName: "software",
            result: "Pass",
            errorCode: undefined,
            errorMessage: undefined
          },
          {
            entityGroupId: 1,
            entityId: 5,
            testId: 15,
            testName: "software",
            result: "Fail",
            errorCode: 6,
            errorMessage: "A pending retired page has been detected in GPU 5."
          },
          {
            entityGroupId: 1,
            entityId: 5,
            testId: 0,
            testName: "memory",
            result: "Skip",
            errorCode: undefined,
            errorMessage: undefined
          }
        ])
        yield* s.runDiagnostic(4)
        expect(injector.lastDiagLevel()).toBe(40)
      })
    )
  )
})

describe("decodeDiagResponse", () => {
  const RESULTS = koffi.offsetof(DiagResponseV12, "results")
  const ERRORS = koffi.offsetof(DiagResponseV12, "errors")
  interface Entity {
    readonly group: number
    readonly id: number
    readonly testId: number
  }
  /** A response holding these results (dcgmDiagEntityResult_v1: entity @0, result @8, testId @12, 16 bytes)
   * and errors (dcgmDiagError_v1: entity @0, code @8, msg @20, testId @532, 536 bytes), written byte by byte. */
  const response = (
    results: ReadonlyArray<Entity & { readonly result: number }>,
    errors: ReadonlyArray<Entity & { readonly code: number; readonly msg: string }>
  ): Buffer => {
    const buf = diagResponseBuffer()
    buf.writeUInt8(errors.length, 5) // numErrors
    buf.writeUInt16LE(results.length, 10) // numResults
    results.forEach((r, i) => {
      const at = RESULTS + i * 16
      buf.writeUInt32LE(r.group, at)
      buf.writeUInt32LE(r.id, at + 4)
      buf.writeUInt32LE(r.result, at + 8)
      buf.writeUInt32LE(r.testId, at + 12)
    })
    errors.forEach((e, i) => {
      const at = ERRORS + i * 536
      buf.writeUInt32LE(e.group, at)
      buf.writeUInt32LE(e.id, at + 4)
      buf.writeUInt32LE(e.code, at + 8)
      buf.write(e.msg, at + 20)
      buf.writeUInt32LE(e.testId, at + 532)
    })
    return buf
  }
  it("matches errors by entity id and test id, names unknown test ids, fails closed on unknown verdicts", () => {
    const buf = response(
      [
        // GPU 2, test 12 (RIST, not named by go-dcgm), verdict 9 (not a dcgmDiagResult_t)
        { group: 1, id: 2, result: 9, testId: 12 },
        // GPU 3, software, FAIL
        { group: 1, id: 3, result: 3, testId: 15 }
      ],
      [{ group: 1, id: 3, code: 6, msg: "A pending retired page has been detected in GPU 3.", testId: 15 }]
    )
    const r = decodeDiagResponse(buf).results
    expect(r.map((x) => [x.testName, x.result, x.errorCode, x.errorMessage])).toEqual([
      ["test 12", "Fail", undefined, undefined],
      ["software", "Fail", 6, "A pending retired page has been detected in GPU 3."]
    ])
  })
  it("an error of the global entity (DCGM_FE_NONE, id 0) is not GPU 0's", () => {
    const buf = response(
      // GPU 0 (DCGM_FE_GPU 1), software, PASS
      [{ group: 1, id: 0, result: 0, testId: 15 }],
      // global scope (DCGM_FE_NONE 0, id 0), software; dcgm_errors.h v4.6.0: 64 = DCGM_FR_API_FAIL,
      // message from DCGM_FR_API_FAIL_MSG
      [
        {
          group: 0,
          id: 0,
          code: 64,
          msg: "API call dcgmGetAllDevices failed: 'Host engine connection invalid/disconnected'",
          testId: 15
        }
      ]
    )
    const [r] = decodeDiagResponse(buf).results
    expect(r).toMatchObject({ entityGroupId: 1, entityId: 0, result: "Pass", errorCode: undefined })
  })
  it("refuses counts beyond the arrays", () => {
    const buf = diagResponseBuffer()
    buf.writeUInt8(33, 5)
    expect(() => decodeDiagResponse(buf)).toThrow(/numErrors 33/)
    const buf2 = diagResponseBuffer()
    buf2.writeUInt16LE(20481, 10)
    expect(() => decodeDiagResponse(buf2)).toThrow(/numResults 20481/)
  })
})
