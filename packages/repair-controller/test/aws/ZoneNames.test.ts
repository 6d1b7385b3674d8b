// Zone id <-> name, from config and DescribeAvailabilityZones only; naming the zones of ARC shifts (pure).
import { describe, expect, it } from "vitest"
import type { ZonalShift } from "../../src/cloud/CloudProvider.ts"
import { namesMissing, withZoneNames } from "../../src/cloud/aws/activeZonalShifts.ts"
import { makeZoneNames } from "../../src/cloud/aws/ZoneNames.ts"

const config = {
  zoneIds: { "usw2-az3": "us-west-2c" },
  subnets: [
    { subnetId: "subnet-0a", zone: "us-west-2a", zoneId: "usw2-az1" },
    { subnetId: "subnet-0b", zone: "us-west-2b" }
  ]
}

describe("makeZoneNames", () => {
  it("knows the pairs config gives (zoneIds, subnets with a zoneId) and those it learns", () => {
    const zones = makeZoneNames(config)
    expect([zones.nameOf("usw2-az1"), zones.nameOf("usw2-az3"), zones.nameOf("usw2-az2")]).toEqual([
      "us-west-2a",
      "us-west-2c",
      undefined
    ])
    expect([zones.idOf("us-west-2a"), zones.idOf("us-west-2b")]).toEqual(["usw2-az1", undefined])
    zones.learn([["usw2-az2", "us-west-2b"]])
    expect([zones.nameOf("usw2-az2"), zones.idOf("us-west-2b")]).toEqual(["us-west-2b", "usw2-az2"])
  })
})

describe("naming the zones of shifts", () => {
  const at = new Date(0)
  const shifts: ReadonlyArray<ZonalShift> = [
    { kind: "zonal-shift", zoneId: "usw2-az1", expiresAt: at },
    { kind: "autoshift", zoneId: "usw2-az2", expiresAt: at },
    { kind: "zonal-shift", zoneId: "usw2-az3", zone: "us-west-2c", expiresAt: at }
  ]
  it.each([
    { learned: [], missing: true, named: ["us-west-2a", undefined, "us-west-2c"] },
    {
      learned: [["usw2-az2", "us-west-2b"] as const],
      missing: false,
      named: ["us-west-2a", "us-west-2b", "us-west-2c"]
    }
  ])("learned $learned: missing=$missing", ({ learned, missing, named }) => {
    const zones = makeZoneNames(config)
    zones.learn(learned)
    expect(namesMissing(shifts, zones.nameOf)).toBe(missing)
    expect(withZoneNames(shifts, zones.nameOf).map((s) => s.zone)).toEqual(named)
  })
})
