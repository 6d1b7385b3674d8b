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
  it("matches errors by entity id and test id, names unknown test ids, fails closed on unknown verdicts", () => {
    const buf = diagResponseBuffer()
    buf.writeUInt8(1, 5) // numErrors
    buf.writeUInt16LE(2, 10) // numResults
    // results[0]: GPU 2, test 12 (RIST, not named by go-dcgm), verdict 9 (not a dcgmDiagResult_t)
    buf.writeUInt32LE(1, RESULTS)
    buf.writeUInt32LE(2, RESULTS + 4)
    buf.writeUInt32LE(9, RESULTS + 8)
    buf.writeUInt32LE(12, RESULTS + 12)
    // results[1]: GPU 3, software, FAIL
    buf.writeUInt32LE(1, RESULTS + 16)
    buf.writeUInt32LE(3, RESULTS + 20)
    buf.writeUInt32LE(3, RESULTS + 24)
    buf.writeUInt32LE(15, RESULTS + 28)
    // errors[0]: GPU 3, code 6 @8, msg @20, testId 15 @532
    buf.writeUInt32LE(1, ERRORS)
    buf.writeUInt32LE(3, ERRORS + 4)
    buf.writeUInt32LE(6, ERRORS + 8)
    buf.write("A pending retired page has been detected in GPU 3.", ERRORS + 20)
    buf.writeUInt32LE(15, ERRORS + 532)
    const r = decodeDiagResponse(buf).results
    expect(r.map((x) => [x.testName, x.result, x.errorCode, x.errorMessage])).toEqual([
      ["test 12", "Fail", undefined, undefined],
      ["software", "Fail", 6, "A pending retired page has been detected in GPU 3."]
    ])
  })
  it("an error of the global entity (DCGM_FE_NONE, id 0) is not GPU 0's", () => {
    const buf = diagResponseBuffer()
    buf.writeUInt8(1, 5) // numErrors
    buf.writeUInt16LE(1, 10) // numResults
    // results[0]: GPU 0 (DCGM_FE_GPU 1), software, PASS
    buf.writeUInt32LE(1, RESULTS)
    buf.writeUInt32LE(0, RESULTS + 4)
    buf.writeUInt32LE(0, RESULTS + 8)
    buf.writeUInt32LE(15, RESULTS + 12)
    // errors[0]: global scope (DCGM_FE_NONE 0, id 0), software; dcgm_errors.h v4.6.0: 64 = DCGM_FR_API_FAIL,
    // message from DCGM_FR_API_FAIL_MSG
    buf.writeUInt32LE(0, ERRORS)
    buf.writeUInt32LE(0, ERRORS + 4)
    buf.writeUInt32LE(64, ERRORS + 8)
    buf.write("API call dcgmGetAllDevices failed: 'Host engine connection invalid/disconnected'", ERRORS + 20)
    buf.writeUInt32LE(15, ERRORS + 532)
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
