// Which Auto Scaling group member replaced a terminated instance (table-driven, pure).
import type { Instance as AutoScalingMember, LifecycleState } from "@aws-sdk/client-auto-scaling"
import type { Instance } from "@aws-sdk/client-ec2"
import { describe, expect, it } from "vitest"
import {
  newestReplacement,
  type ReplacementSearch,
  replacementCandidates
} from "../../src/cloud/aws/AutoScalingReplacement.ts"

const OLD = "i-00000000000000001"
const TERMINATED = Date.UTC(2026, 10, 30, 5, 0, 0)
const search = (s: Partial<ReplacementSearch> = {}): ReplacementSearch => ({
  old: OLD,
  before: new Set([OLD, "i-a"]),
  claimed: new Set(),
  terminatedAtMs: TERMINATED,
  ...s
})
const member = (
  InstanceId: string,
  LifecycleState: LifecycleState = "InService"
): Pick<AutoScalingMember, "InstanceId" | "LifecycleState"> => ({ InstanceId, LifecycleState })
const launched = (InstanceId: string, minutesAfterTermination: number): Instance => ({
  InstanceId,
  LaunchTime: new Date(TERMINATED + minutesAfterTermination * 60_000)
})

describe("replacementCandidates", () => {
  const members = [
    member(OLD, "Terminating"),
    member("i-a"),
    member("i-b", "Pending"),
    member("i-c"),
    member("i-d", "Terminating:Wait"),
    member("i-e", "Detaching"),
    member("i-f", "Standby")
  ]
  it.each([
    { why: "new members only, not leaving the group", s: search(), ids: ["i-b", "i-c"] },
    {
      why: "one already reported for another instance",
      s: search({ claimed: new Set(["i-c"]) }),
      ids: ["i-b"]
    },
    {
      why: "after a restart: every member but the old one",
      s: search({ before: undefined }),
      ids: ["i-a", "i-b", "i-c"]
    }
  ])("$why", ({ s, ids }) => {
    expect(replacementCandidates(members, s)).toEqual(ids)
  })
})

describe("newestReplacement", () => {
  const described = [launched("i-early", -30), launched("i-b", 2), launched("i-c", 5)]
  it.each([
    { why: "recorded termination: the newest candidate", s: search(), id: "i-c" },
    {
      why: "after a restart: the newest launched after the termination",
      s: search({ before: undefined }),
      id: "i-c"
    },
    {
      why: "after a restart, nothing launched since the termination: none yet",
      s: search({ before: undefined }),
      only: [launched("i-early", -30)],
      id: undefined
    },
    {
      why: "recorded termination: launch time does not matter (we saw the group before)",
      s: search(),
      only: [launched("i-early", -30)],
      id: "i-early"
    },
    {
      why: "after a restart with no termination time from EC2: the newest",
      s: search({ before: undefined, terminatedAtMs: undefined }),
      only: [launched("i-early", -30), launched("i-b", -10)],
      id: "i-b"
    }
  ])("$why", ({ s, only, id }) => {
    expect(newestReplacement(only ?? described, s)?.InstanceId).toBe(id)
  })
})
