import { describe, expect, it } from "vitest"
import { Schema } from "effect"
import {
  activeFromLists,
  activeFromManagedResource,
  isZoneShifted
} from "../../src/cloud/aws/activeZonalShifts.ts"
import {
  GetManagedResourceResponse,
  ListAutoshiftsResponse,
  ListZonalShiftsResponse
} from "../../src/cloud/aws/ArcZonalShiftSchemas.ts"

const ARN = "arn:aws:eks:us-west-2:111122223333:cluster/prod"
const now = Date.UTC(2026, 10, 30, 12, 0, 0)
const sec = (ms: number) => ms / 1000
const window = { nowMs: now, refreshAtMs: now + 30_000 }
const names: Record<string, string> = { "usw2-az1": "us-west-2a", "usw2-az2": "us-west-2b" }
const zoneNameOf = (id: string) => names[id]

// Field names and types as in the ARC API reference (GetManagedResource, 2022-10-30).
const managed = Schema.decodeUnknownSync(GetManagedResourceResponse)({
  arn: ARN,
  name: "prod",
  appliedWeights: { "usw2-az1": 0, "usw2-az2": 1, "usw2-az3": 1 },
  zonalAutoshiftStatus: "ENABLED",
  zonalShifts: [
    {
      appliedStatus: "APPLIED",
      awayFrom: "usw2-az1",
      comment: "bad az",
      expiryTime: sec(now + 3_600_000),
      resourceIdentifier: ARN,
      shiftType: "ZONAL_SHIFT",
      startTime: sec(now - 60_000),
      zonalShiftId: "zs-1"
    },
    {
      appliedStatus: "NOT_APPLIED",
      awayFrom: "usw2-az2",
      expiryTime: sec(now + 3_600_000),
      startTime: sec(now - 60_000),
      zonalShiftId: "zs-2",
      shiftType: "PRACTICE_RUN"
    },
    {
      appliedStatus: "APPLIED",
      awayFrom: "usw2-az3",
      expiryTime: sec(now - 1000),
      startTime: sec(now - 60_000),
      zonalShiftId: "zs-expired"
    }
  ],
  autoshifts: [{ appliedStatus: "APPLIED", awayFrom: "usw2-az3", startTime: sec(now - 5000) }],
  someFutureField: { x: 1 }
})

describe("activeFromManagedResource", () => {
  it("keeps applied unexpired zonal shifts and applied autoshifts", () => {
    const active = activeFromManagedResource(managed, window, zoneNameOf)
    expect(active).toEqual([
      {
        kind: "zonal-shift",
        zoneId: "usw2-az1",
        zone: "us-west-2a",
        expiresAt: new Date(now + 3_600_000),
        id: "zs-1"
      },
      { kind: "autoshift", zoneId: "usw2-az3", expiresAt: new Date(now + 30_000) }
    ])
  })

  it("a shift expiring exactly now is over", () => {
    const r = Schema.decodeUnknownSync(GetManagedResourceResponse)({
      zonalShifts: [
        {
          appliedStatus: "APPLIED",
          awayFrom: "usw2-az1",
          expiryTime: sec(now),
          startTime: 0,
          zonalShiftId: "z"
        }
      ]
    })
    expect(activeFromManagedResource(r, window, zoneNameOf)).toEqual([])
  })

  it("rejects a response without zonalShifts or with a bad status", () => {
    expect(() => Schema.decodeUnknownSync(GetManagedResourceResponse)({ arn: ARN })).toThrow(/zonalShifts/)
    expect(() =>
      Schema.decodeUnknownSync(GetManagedResourceResponse)({
        zonalShifts: [
          { appliedStatus: "MAYBE", awayFrom: "a", expiryTime: 1, startTime: 1, zonalShiftId: "z" }
        ]
      })
    ).toThrow(/appliedStatus/)
  })
})

describe("activeFromLists", () => {
  it("counts our ACTIVE unexpired shifts and every ACTIVE autoshift", () => {
    const zs = Schema.decodeUnknownSync(ListZonalShiftsResponse)({
      items: [
        {
          awayFrom: "usw2-az2",
          expiryTime: sec(now + 60_000),
          startTime: sec(now),
          resourceIdentifier: ARN,
          status: "ACTIVE",
          zonalShiftId: "mine"
        },
        {
          awayFrom: "usw2-az1",
          expiryTime: sec(now + 60_000),
          startTime: sec(now),
          resourceIdentifier: "arn:aws:elasticloadbalancing:us-west-2:111122223333:loadbalancer/app/x/y",
          status: "ACTIVE",
          zonalShiftId: "other-resource"
        },
        {
          awayFrom: "usw2-az1",
          expiryTime: sec(now + 60_000),
          startTime: sec(now),
          resourceIdentifier: ARN,
          status: "CANCELED",
          zonalShiftId: "canceled"
        }
      ]
    })
    const as = Schema.decodeUnknownSync(ListAutoshiftsResponse)({
      items: [
        { awayFrom: "usw2-az1", startTime: sec(now), status: "ACTIVE" },
        { awayFrom: "usw2-az2", startTime: sec(now - 9000), endTime: sec(now - 10), status: "COMPLETED" }
      ]
    })
    expect(activeFromLists(ARN, zs.items, as.items, window, zoneNameOf)).toEqual([
      {
        kind: "zonal-shift",
        zoneId: "usw2-az2",
        zone: "us-west-2b",
        expiresAt: new Date(now + 60_000),
        id: "mine"
      },
      { kind: "autoshift", zoneId: "usw2-az1", zone: "us-west-2a", expiresAt: new Date(now + 30_000) }
    ])
  })
})

describe("isZoneShifted", () => {
  const shifts = activeFromManagedResource(managed, window, zoneNameOf)
  it("matches by zone id, or by zone name when the id is unknown", () => {
    expect(isZoneShifted(shifts, { zoneId: "usw2-az1" })).toBe(true)
    expect(isZoneShifted(shifts, { zone: "us-west-2a" })).toBe(true)
    expect(isZoneShifted(shifts, { zone: "us-west-2b", zoneId: "usw2-az2" })).toBe(false)
    expect(isZoneShifted(shifts, { zoneId: "usw2-az3" })).toBe(true)
    expect(isZoneShifted(shifts, {})).toBe(false)
  })
})
