// The double's control channel: a violation written into its FIFO by control.ts (as `nodemend inject` does from
// another process) reaches the registered policy callback and decodes as the vendor struct says. Fixture values:
// dcgm.test.ts's (shared/reference/dcgm-nvml.md §2.3-2.4).
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Stream } from "effect"
import { afterAll, beforeAll } from "vitest"
import { decodePolicyResponse } from "../src/policy-violation.ts"
import {
  encodePolicyResponse,
  PolicyFifoUnavailable,
  POLICY_FIFO_IN_HOST,
  writePolicyViolation
} from "./double/control.ts"
import type { PolicyFire } from "./double/injector.ts"
import { injector, resetDoublesBeforeEach, withSession } from "./session.ts"

resetDoublesBeforeEach()

const dir = mkdtempSync(join(tmpdir(), "nodemend-dcgm-control-"))
const fifo = join(dir, POLICY_FIFO_IN_HOST.replaceAll("/", "-"))
beforeAll(() => {
  expect(injector.watchPolicyFifo(fifo)).toBe(0)
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const ts = 1_700_000_000_000_000
const FIXTURES: ReadonlyArray<readonly [PolicyFire, object]> = [
  [
    { condition: "DBE", gpuId: 0, location: 2, numerrors: 1 },
    { _tag: "DoubleBitEcc", location: "Device", errors: 1 }
  ],
  [
    { condition: "PCI", gpuId: 1, counter: 1 },
    { _tag: "PcieReplay", counter: 1 }
  ],
  [
    { condition: "MPR", gpuId: 2, sbepages: 10, dbepages: 10 },
    { _tag: "RetiredPages", sbePages: 10, dbePages: 10 }
  ],
  [
    { condition: "THERMAL", gpuId: 3, thermalViolation: 95 },
    { _tag: "Thermal", temperatureC: 95 }
  ],
  [
    { condition: "POWER", gpuId: 4, powerViolation: 210 },
    { _tag: "Power", watts: 210 }
  ],
  [
    { condition: "NVLINK", gpuId: 5, fieldId: 409, counter: 1 },
    { _tag: "NvLink", fieldId: 409, counter: 1 }
  ],
  [
    { condition: "XID", gpuId: 6, errnum: 79 },
    { _tag: "Xid", xid: 79 }
  ]
]

describe("the record control.ts writes", () => {
  it("is dcgmPolicyCallbackResponse_v2: 32 bytes, version 2, and decodes to what was written", () => {
    for (const [fire, expected] of FIXTURES) {
      const b = encodePolicyResponse(fire, ts)
      expect(b.length).toBe(32)
      expect(b.readUInt32LE(0)).toBe(0x02000020)
      expect(decodePolicyResponse(b)).toEqual({ ...expected, gpuId: fire.gpuId, timestampUs: ts })
    }
  })
})

describe("the FIFO control channel", () => {
  it.live("every condition written into the FIFO reaches the policy callback, decoded", () =>
    withSession((s) =>
      Effect.gen(function* () {
        const collected = yield* s.violations.pipe(
          Stream.take(FIXTURES.length),
          Stream.runCollect,
          Effect.forkChild
        )
        yield* Effect.yieldNow
        for (const [fire] of FIXTURES)
          expect(writePolicyViolation(fifo, fire, { timestampUs: ts + fire.gpuId }).delivered).toBe(1)
        const got = yield* Fiber.join(collected)
        for (const [fire, expected] of FIXTURES)
          expect(got).toContainEqual({ ...expected, gpuId: fire.gpuId, timestampUs: ts + fire.gpuId })
        const log = readFileSync(`${fifo}.log`, "utf8")
        expect(log).toContain(`ts=${ts + 6} version=0x02000020 condition=0x40 gpu=6 delivered=1`)
      })
    )
  )

  it.live("without a registration the violation is dropped, as DCGM drops it, and the log says so", () =>
    Effect.sync(() => {
      const d = writePolicyViolation(fifo, { condition: "XID", gpuId: 0, errnum: 79 })
      expect(d.delivered).toBe(0)
      expect(injector.callbacksInFlight()).toBe(0)
    })
  )

  it("a FIFO nobody reads fails at once instead of hanging, and a missing one says so", () => {
    const orphan = join(dir, "orphan")
    execFileSync("mkfifo", [orphan])
    expect(() => writePolicyViolation(orphan, { condition: "XID", gpuId: 0, errnum: 79 })).toThrow(
      PolicyFifoUnavailable
    )
    expect(() => writePolicyViolation(orphan, { condition: "XID", gpuId: 0, errnum: 79 })).toThrow(
      /is the node's agent running/
    )
    expect(() =>
      writePolicyViolation(join(dir, "absent"), { condition: "XID", gpuId: 0, errnum: 79 })
    ).toThrow(/does not exist/)
  })
})
