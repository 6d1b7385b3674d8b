// dcgmHealthSet / dcgmHealthCheck against the C test double, and decoding of dcgmHealthResponse_v5.
// Incident codes and message formats: NVIDIA/DCGM v4.6.0 dcgmlib/dcgm_errors.h (DCGM_FR_*_MSG).
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { DcgmErrorCode, EntityGroup, HealthResult, HealthSystem } from "../src/constants.ts"
import { decodeHealthResponse, healthResponseBuffer, healthVerdict } from "../src/health-response.ts"
import { injector, resetDoublesBeforeEach, withSession } from "./session.ts"

resetDoublesBeforeEach()

describe("dcgmHealthCheck", () => {
  it.live("no incidents: Pass and an empty list", () =>
    withSession((s) =>
      Effect.gen(function* () {
        expect(yield* s.healthCheck).toEqual({ overallHealth: "Pass", incidents: [] })
      })
    )
  )

  it.live("decodes every incident: system, verdict, dcgmError_t code, message, entity", () =>
    withSession((s) =>
      Effect.gen(function* () {
        injector.addHealthIncident({
          system: HealthSystem.MEM,
          health: HealthResult.FAIL,
          code: DcgmErrorCode.VOLATILE_DBE_DETECTED,
          message: "Detected 1 volatile double-bit ECC error(s) in GPU 3.",
          entityId: 3
        })
        injector.addHealthIncident({
          system: HealthSystem.NVLINK,
          health: HealthResult.WARN,
          code: DcgmErrorCode.NVLINK_DOWN,
          message: "GPU 2's NvLink link 5 is currently down",
          entityId: 2
        })
        injector.addHealthIncident({
          system: HealthSystem.NVSWITCH_FATAL,
          health: HealthResult.FAIL,
          code: 109, // DCGM_FR_SXID_ERROR (DCGM_FR_SXID_ERROR_MSG)
          message: "Detected fatal NvSwitch SXID 12028",
          entityGroupId: EntityGroup.SWITCH,
          entityId: 1
        })
        const report = yield* s.healthCheck
        expect(report.overallHealth).toBe("Fail")
        expect(report.incidents).toEqual([
          {
            system: 0x10,
            health: "Fail",
            code: 4,
            message: "Detected 1 volatile double-bit ECC error(s) in GPU 3.",
            entityGroupId: 1,
            entityId: 3
          },
          {
            system: 0x2,
            health: "Warn",
            code: 14,
            message: "GPU 2's NvLink link 5 is currently down",
            entityGroupId: 1,
            entityId: 2
          },
          {
            system: 0x800,
            health: "Fail",
            code: 109,
            message: "Detected fatal NvSwitch SXID 12028",
            entityGroupId: 3,
            entityId: 1
          }
        ])
        // a message filling the whole 1024-byte field (1023 chars + NUL) survives intact
        injector.clearHealthIncidents()
        const long = "x".repeat(1023)
        injector.addHealthIncident({
          system: HealthSystem.PCIE,
          health: 10,
          code: 3,
          message: long,
          entityId: 0
        })
        const again = yield* s.healthCheck
        expect(again.overallHealth).toBe("Warn")
        expect(again.incidents[0]!.message).toBe(long)
        expect(again.incidents[0]!.code).toBe(3)
      })
    )
  )

  it.live("the session watches every system, so incidents of any system are reported", () =>
    withSession((s) =>
      Effect.gen(function* () {
        injector.addHealthIncident({
          system: HealthSystem.CONNECTX,
          health: HealthResult.WARN,
          code: 1,
          message: "m",
          entityId: 0
        })
        expect((yield* s.healthCheck).incidents).toHaveLength(1)
      })
    )
  )

  it.live("a dropped connection fails the check with the DCGM code", () =>
    withSession((s) =>
      Effect.gen(function* () {
        injector.dropConnections()
        const err = yield* Effect.flip(s.healthCheck)
        expect(err._tag).toBe("DcgmCallFailed")
        if (err._tag === "DcgmCallFailed") expect(err.code).toBe(-21)
      })
    )
  )
})

describe("decodeHealthResponse", () => {
  it("maps dcgmHealthWatchResults_t and fails closed on unknown verdicts", () => {
    expect([0, 10, 20, 7].map(healthVerdict)).toEqual(["Pass", "Warn", "Fail", "Fail"])
  })
  it("refuses an incidentCount beyond the 1024-slot array instead of reading past it", () => {
    const buf = healthResponseBuffer()
    buf.writeUInt32LE(1025, 8)
    expect(() => decodeHealthResponse(buf)).toThrow(/incidentCount 1025/)
  })
  it("reads only incidentCount incidents", () => {
    const buf = healthResponseBuffer()
    buf.writeUInt32LE(20, 4)
    buf.writeUInt32LE(1, 8)
    // incident 0 at offset 12: system, health, msg[1024], code @ +1032, entity @ +1036
    // DCGM_HEALTH_WATCH_MEM, FAIL, DCGM_FR_VOLATILE_DBE_DETECTED (4) with its DCGM_FR_*_MSG text
    buf.writeUInt32LE(0x10, 12)
    buf.writeUInt32LE(20, 16)
    buf.write("Detected 2 volatile double-bit ECC error(s) in GPU 6.", 20)
    buf.writeUInt32LE(4, 12 + 1032)
    buf.writeUInt32LE(1, 12 + 1036)
    buf.writeUInt32LE(6, 12 + 1040)
    // incident 1 (not counted) must not appear
    buf.writeUInt32LE(0x1, 12 + 1044)
    expect(decodeHealthResponse(buf)).toEqual({
      overallHealth: "Fail",
      incidents: [
        {
          system: 0x10,
          health: "Fail",
          code: 4,
          message: "Detected 2 volatile double-bit ECC error(s) in GPU 6.",
          entityGroupId: 1,
          entityId: 6
        }
      ]
    })
  })
})
