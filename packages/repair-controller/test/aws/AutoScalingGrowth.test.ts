import type { Instance } from "@aws-sdk/client-ec2"
import { describe, expect, it } from "vitest"
import { firstLaunchedSince, growthFor, launchFailure } from "../../src/cloud/aws/AutoScalingGrowth.ts"

const group = { AutoScalingGroupName: "gpu", DesiredCapacity: 3, MaxSize: 4 }
const at = (iso: string) => new Date(iso)
const instance = (id: string, launched: string): Instance => ({ InstanceId: id, LaunchTime: at(launched) })

describe("growthFor", () => {
  it("grows to the group's desired capacity + 1, an absolute size", () => {
    expect(growthFor(group, "i-old", undefined)).toEqual({ kind: "grow", target: 4 })
  })

  it("never grows again once the repair recorded a size, whatever the group's size is now", () => {
    expect(growthFor({ ...group, DesiredCapacity: 4 }, "i-old", 4)).toEqual({ kind: "grown", target: 4 })
    expect(growthFor({ ...group, DesiredCapacity: 2 }, "i-old", 4)).toEqual({ kind: "grown", target: 4 })
  })

  it("at MaxSize: no growth, and a message that names the group, its sizes and the way out", () => {
    const full = growthFor({ ...group, DesiredCapacity: 4 }, "i-old", undefined)
    expect(full.kind).toBe("full")
    expect(full.kind === "full" && full.message).toMatch(
      /^Auto Scaling group gpu is at its MaxSize \(4, desired 4\): .*i-old.*raise MaxSize, or let the repair remove first/
    )
  })
})

describe("firstLaunchedSince", () => {
  const members = [
    instance("i-before", "2026-12-01T10:00:00Z"),
    instance("i-second", "2026-12-01T10:00:09Z"),
    instance("i-first", "2026-12-01T10:00:05Z")
  ]
  it("the first member launched at or after the request; EC2's whole seconds count the second it was asked in", () => {
    expect(firstLaunchedSince(members, Date.parse("2026-12-01T10:00:04.000Z"))?.InstanceId).toBe("i-first")
    expect(firstLaunchedSince(members, Date.parse("2026-12-01T10:00:05.900Z"))?.InstanceId).toBe("i-first")
    expect(firstLaunchedSince(members, Date.parse("2026-12-01T10:00:06.000Z"))?.InstanceId).toBe("i-second")
    expect(firstLaunchedSince(members, Date.parse("2026-12-01T10:00:10.000Z"))).toBeUndefined()
  })
  it("without a request time, the oldest candidate", () => {
    expect(firstLaunchedSince(members, undefined)?.InstanceId).toBe("i-before")
  })
})

describe("launchFailure", () => {
  const activities = [
    {
      StatusCode: "Failed" as const,
      StatusMessage: "insufficient capacity",
      StartTime: at("2026-12-01T10:00:07Z")
    },
    { StatusCode: "Successful" as const, StartTime: at("2026-12-01T10:00:03Z") },
    { StatusCode: "Failed" as const, StatusMessage: "old failure", StartTime: at("2026-12-01T09:00:00Z") }
  ]
  it("the newest Failed activity since the request, none before it counts", () => {
    expect(launchFailure(activities, Date.parse("2026-12-01T10:00:05Z"))).toBe("insufficient capacity")
    expect(launchFailure(activities, Date.parse("2026-12-01T10:00:08Z"))).toBeUndefined()
    expect(launchFailure(activities.slice(1), Date.parse("2026-12-01T09:30:00Z"))).toBeUndefined()
  })
})
