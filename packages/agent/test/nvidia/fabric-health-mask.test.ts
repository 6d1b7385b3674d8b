// Fixtures: shared/reference/dcgm-nvml.md 3.7 and section 8 (DCGM's health-watch test values).
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeFabricHealthMask, fabricMaskMessage } from "../../src/monitors/nvidia/fabric-health-mask.ts"
import { fabricMaskFindings } from "../../src/monitors/nvidia/polled-findings.ts"

describe("fabric health mask", () => {
  it.each([0x1aa, 0x0aa, 0xaa, 0x2, 0x0, 0x80])("healthy 0x%s has no faulting sub-field", (mask) => {
    expect(decodeFabricHealthMask(mask).faults).toEqual([])
  })
  it("0x1AA decodes to every sub-field FALSE and configuration NONE", () => {
    expect(decodeFabricHealthMask(0x1aa).fields).toEqual([
      { name: "degraded_bw", value: 2 },
      { name: "route_recovery", value: 2 },
      { name: "route_unhealthy", value: 2 },
      { name: "access_timeout_recovery", value: 2 },
      { name: "incorrect_configuration", value: 1 },
      { name: "partition_assigned", value: 0 }
    ])
  })
  it.each([
    [0x19a, ["route_unhealthy=1"]],
    [0x1a9, ["degraded_bw=1"]],
    [0x1a6, ["route_recovery=1"]],
    [0x16a, ["access_timeout_recovery=1"]],
    [0x2aa, ["incorrect_configuration=2"]],
    [
      0x255,
      [
        "degraded_bw=1",
        "route_recovery=1",
        "route_unhealthy=1",
        "access_timeout_recovery=1",
        "incorrect_configuration=2"
      ]
    ]
  ])("faulty 0x%s names exactly its faulting sub-fields", (mask, expected) => {
    expect(decodeFabricHealthMask(mask).faults.map((f) => `${f.name}=${f.value}`)).toEqual(expected)
  })
  it("message lists the faults", () => {
    expect(fabricMaskMessage(decodeFabricHealthMask(0x19a))).toBe(
      "GPU fabric health mask 0x19A: route_unhealthy=1"
    )
  })
  it("a healthy non-zero mask never raises NvidiaFabricError (any mix of not-supported/FALSE/NONE/partition)", () => {
    const twoBitHealthy = fc.constantFrom(0, 2)
    fc.assert(
      fc.property(
        twoBitHealthy,
        twoBitHealthy,
        twoBitHealthy,
        twoBitHealthy,
        fc.constantFrom(0, 1),
        fc.integer({ min: 0, max: 3 }),
        (a, b, c, d, cfg, part) => {
          const mask = a | (b << 2) | (c << 4) | (d << 6) | (cfg << 8) | (part << 12)
          const finding = fabricMaskFindings(mask, 1, "gpu0")
          expect(finding._tag).toBe("Resolution")
        }
      )
    )
  })
  it("any TRUE 2-bit sub-field or a bad configuration raises it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0x3fff }), (mask) => {
        const bad = [0, 2, 4, 6].some((shift) => ((mask >>> shift) & 3) === 1) || ((mask >>> 8) & 0xf) > 1
        expect(fabricMaskFindings(mask, 1, "gpu0")._tag).toBe(bad ? "Detection" : "Resolution")
      })
    )
  })
})
