/**
 * Decoding of dcgmDiagResponse_v12 (dcgmRunDiagnostic, DCGM 4.2+). The struct is 1.4 MB; only the counted
 * prefix of each array is decoded. Results are read as go-dcgm's RunDiag reads them (the library NMA uses):
 * one per `results[i]`, its test named by the test index, its error the first `errors[]` entry of the same
 * entity (group and id) and test id.
 */
import koffi from "koffi"
import {
  DIAG_RESPONSE_ERRORS_MAX,
  DIAG_RESPONSE_RESULTS_MAX,
  DiagEntityResultV1,
  DiagErrorV1,
  DiagResponseV12,
  StructVersion
} from "./layouts.ts"

/** dcgmDiagResult_t */
export type DiagVerdict = "Pass" | "Skip" | "Warn" | "Fail" | "NotRun"
const VERDICTS: readonly DiagVerdict[] = ["Pass", "Skip", "Warn", "Fail", "NotRun"]

/** dcgmPerGpuTestIndices_t -> the test names go-dcgm reports (gpuTestName). */
export const DIAG_TEST_NAMES: Readonly<Record<number, string>> = {
  0: "memory",
  1: "diagnostic",
  2: "pcie",
  3: "sm stress",
  4: "targeted stress",
  5: "targeted power",
  6: "memory bandwidth",
  7: "memtest",
  8: "pulse",
  9: "eud",
  15: "software",
  16: "context create"
}
export const DCGM_SOFTWARE_INDEX = 15

/** dcgmDiagnosticLevel_t for DCGM_DIAG_LEVEL-style levels 1..4 (go-dcgm DiagQuick..DiagExtended). */
export const DIAG_LEVELS = { 1: 10, 2: 20, 3: 30, 4: 40 } as const
export type DiagLevel = keyof typeof DIAG_LEVELS

export interface DiagEntityResult {
  readonly entityGroupId: number
  readonly entityId: number
  readonly testId: number
  readonly testName: string
  readonly result: DiagVerdict
  /** The matching error, when DCGM reported one. */
  readonly errorCode: number | undefined
  readonly errorMessage: string | undefined
}

export interface DiagReport {
  readonly results: readonly DiagEntityResult[]
}

export const DIAG_RESPONSE_SIZE = koffi.sizeof(DiagResponseV12)
const ERRORS = koffi.offsetof(DiagResponseV12, "errors")
const RESULTS = koffi.offsetof(DiagResponseV12, "results")
const ERROR_SIZE = koffi.sizeof(DiagErrorV1)
const RESULT_SIZE = koffi.sizeof(DiagEntityResultV1)

/** A zeroed response with its version set: the caller must zero-initialize it (dcgm_agent.h). */
export const diagResponseBuffer = (): Buffer => {
  const buf = Buffer.alloc(DIAG_RESPONSE_SIZE)
  buf.writeUInt32LE(StructVersion.diagResponseV12, 0)
  return buf
}

interface RawEntity {
  entityGroupId: number
  entityId: number
}

export const decodeDiagResponse = (buf: Buffer): DiagReport => {
  if (buf.length < DIAG_RESPONSE_SIZE) throw new Error(`diag response buffer too small: ${buf.length}`)
  const numErrors = buf.readUInt8(5)
  const numResults = buf.readUInt16LE(10)
  if (numErrors > DIAG_RESPONSE_ERRORS_MAX)
    throw new Error(`numErrors ${numErrors} exceeds ${DIAG_RESPONSE_ERRORS_MAX}`)
  if (numResults > DIAG_RESPONSE_RESULTS_MAX)
    throw new Error(`numResults ${numResults} exceeds ${DIAG_RESPONSE_RESULTS_MAX}`)
  const errors = Array.from(
    { length: numErrors },
    (_, i) =>
      koffi.decode(buf, ERRORS + i * ERROR_SIZE, DiagErrorV1) as {
        entity: RawEntity
        code: number
        msg: string
        testId: number
      }
  )
  const results: DiagEntityResult[] = []
  for (let i = 0; i < numResults; i++) {
    const r = koffi.decode(buf, RESULTS + i * RESULT_SIZE, DiagEntityResultV1) as {
      entity: RawEntity
      result: number
      testId: number
    }
    // an entity is its (group, id) pair: a global (DCGM_FE_NONE 0) error must not attach to GPU 0's result
    const error = errors.find(
      (e) =>
        e.entity.entityGroupId === r.entity.entityGroupId &&
        e.entity.entityId === r.entity.entityId &&
        e.testId === r.testId
    )
    results.push({
      entityGroupId: r.entity.entityGroupId,
      entityId: r.entity.entityId,
      testId: r.testId,
      testName: DIAG_TEST_NAMES[r.testId] ?? `test ${r.testId}`,
      // an unknown verdict fails closed
      result: VERDICTS[r.result] ?? "Fail",
      errorCode: error?.code,
      errorMessage: error?.msg
    })
  }
  return { results }
}
