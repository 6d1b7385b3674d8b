// The fake's EC2 Auto Scaling Query API, spoken by hand (the SDK speaks it in the repair controller's tests):
// groups made through the admin API keep their desired capacity, grow and shrink, and fail like AWS.
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AdminClient } from "../src/admin/AdminClient.ts"
import { type FakeCloud, startFakeCloud } from "../src/FakeCloudServer.ts"

let cloud: FakeCloud
let admin: AdminClient

const auth = (service: string) => {
  const d = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "")
  return {
    "x-amz-date": d,
    authorization: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${d.slice(0, 8)}/us-west-2/${service}/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"a".repeat(64)}`
  }
}

async function call(version: string, service: string, params: Record<string, string>) {
  const res = await fetch(cloud.url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8", ...auth(service) },
    body: new URLSearchParams({ Version: version, ...params }).toString()
  })
  return { status: res.status, xml: await res.text() }
}
const asg = (params: Record<string, string>) => call("2011-01-01", "autoscaling", params)
const ec2 = (params: Record<string, string>) => call("2016-11-15", "ec2", params)

const all = (xml: string, tag: string) =>
  [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, "g"))].map((m) => m[1])
const one = (xml: string, tag: string) => all(xml, tag)[0]
/** The fake cloud answers within milliseconds: a short timeout, polled often. */
const FAST = { timeoutMs: 3000, intervalMs: 10 }
const liveMembers = async (name: string) =>
  (await admin.autoScalingGroup(name)).members.filter((m) => m.lifecycleState !== "Terminating")

beforeAll(async () => {
  cloud = await startFakeCloud({
    region: "us-west-2",
    bootDelayMs: 20,
    terminateDelayMs: 20,
    autoScalingReconcileMs: 50,
    autoScalingGroups: [
      {
        name: "from-start",
        launchTemplate: { id: "lt-0aaaaaaaaaaaaaaaa", version: "$Default" },
        minSize: 0,
        maxSize: 2,
        desiredCapacity: 1
      }
    ]
  })
  admin = new AdminClient(cloud.url)
})
afterAll(() => cloud.close())

describe("Auto Scaling groups", () => {
  it("a group made at start or through the admin API launches its desired members, tagged as AWS tags them", async () => {
    expect((await admin.autoScalingGroup("from-start")).members).toHaveLength(1)
    const before = await admin.stats()
    const g = await admin.createAutoScalingGroup({
      name: "gpu",
      launchTemplateId: "lt-0123456789abcdef0",
      instanceType: "g5.xlarge",
      zones: ["us-west-2a", "us-west-2b"],
      minSize: 1,
      maxSize: 3,
      desiredCapacity: 2,
      tags: { "nodemend.io/pool": "gpu" }
    })
    expect(g.members.map((m) => m.zone).sort()).toEqual(["us-west-2a", "us-west-2b"])
    const stats = await admin.stats()
    expect(stats.launchesBy.autoScaling - before.launchesBy.autoScaling).toBe(2)
    expect(stats.launchesBy.runInstances).toBe(before.launchesBy.runInstances)
    const described = await ec2({ Action: "DescribeInstances", "InstanceId.1": g.members[0]!.instanceId })
    const tags = Object.fromEntries(
      all(described.xml, "key").map((k, i) => [k, all(described.xml, "value")[i]])
    )
    expect(tags).toMatchObject({
      "aws:autoscaling:groupName": "gpu",
      "aws:ec2launchtemplate:id": "lt-0123456789abcdef0",
      "nodemend.io/pool": "gpu"
    })
    expect(one(described.xml, "instanceType")).toBe("g5.xlarge")
  })

  it("DescribeAutoScalingGroups and DescribeAutoScalingInstances answer in the Query protocol's XML", async () => {
    const r = await asg({ Action: "DescribeAutoScalingGroups", "AutoScalingGroupNames.member.1": "gpu" })
    expect(r.status).toBe(200)
    expect(r.xml).toMatch(
      /^<\?xml[^>]*>\n<DescribeAutoScalingGroupsResponse xmlns="http:\/\/autoscaling\.amazonaws\.com\/doc\/2011-01-01\/"><DescribeAutoScalingGroupsResult><AutoScalingGroups><member>/
    )
    expect([one(r.xml, "MinSize"), one(r.xml, "MaxSize"), one(r.xml, "DesiredCapacity")]).toEqual([
      "1",
      "3",
      "2"
    ])
    expect(one(r.xml, "VPCZoneIdentifier")).toBe("subnet-0fake00000000000a,subnet-0fake00000000000b")
    const id = all(r.xml, "InstanceId")[0]!
    const i = await asg({ Action: "DescribeAutoScalingInstances", "InstanceIds.member.1": id })
    expect(one(i.xml, "AutoScalingGroupName")).toBe("gpu")
    expect(one(i.xml, "LifecycleState")).toMatch(/^(Pending|InService)$/)
    const none = await asg({
      Action: "DescribeAutoScalingInstances",
      "InstanceIds.member.1": "i-0000000000000000f"
    })
    expect(none.xml).toContain("<AutoScalingInstances/>")
  })

  it("SetDesiredCapacity grows and shrinks the group; beyond MaxSize it is a ValidationError", async () => {
    expect(
      (await asg({ Action: "SetDesiredCapacity", AutoScalingGroupName: "gpu", DesiredCapacity: "3" })).status
    ).toBe(200)
    expect(await liveMembers("gpu")).toHaveLength(3)
    const over = await asg({
      Action: "SetDesiredCapacity",
      AutoScalingGroupName: "gpu",
      DesiredCapacity: "4"
    })
    expect(over.status).toBe(400)
    expect([one(over.xml, "Type"), one(over.xml, "Code"), one(over.xml, "Message")]).toEqual([
      "Sender",
      "ValidationError",
      "New SetDesiredCapacity value 4 is above max value 3 for the AutoScalingGroup."
    ])
    await asg({ Action: "SetDesiredCapacity", AutoScalingGroupName: "gpu", DesiredCapacity: "2" })
    expect(await liveMembers("gpu")).toHaveLength(2)
    const missing = await asg({
      Action: "SetDesiredCapacity",
      AutoScalingGroupName: "nope",
      DesiredCapacity: "1"
    })
    expect(one(missing.xml, "Code")).toBe("ValidationError")
  })

  it("TerminateInstanceInAutoScalingGroup: without decrement the group replaces the member, with it the group shrinks", async () => {
    const [first] = await liveMembers("gpu")
    const keep = await asg({
      Action: "TerminateInstanceInAutoScalingGroup",
      InstanceId: first!.instanceId,
      ShouldDecrementDesiredCapacity: "false"
    })
    expect(one(keep.xml, "Description")).toBe(`Terminating EC2 instance: ${first!.instanceId}`)
    const after = await admin.autoScalingGroup("gpu")
    expect(after.desiredCapacity).toBe(2)
    expect((await liveMembers("gpu")).map((m) => m.instanceId)).not.toContain(first!.instanceId)
    expect(await liveMembers("gpu")).toHaveLength(2)
    const [second] = await liveMembers("gpu")
    await asg({
      Action: "TerminateInstanceInAutoScalingGroup",
      InstanceId: second!.instanceId,
      ShouldDecrementDesiredCapacity: "true"
    })
    expect((await admin.autoScalingGroup("gpu")).desiredCapacity).toBe(1)
    expect(await liveMembers("gpu")).toHaveLength(1)
    // At MinSize a decrement is refused, as AWS refuses it.
    const [last] = await liveMembers("gpu")
    const refused = await asg({
      Action: "TerminateInstanceInAutoScalingGroup",
      InstanceId: last!.instanceId,
      ShouldDecrementDesiredCapacity: "true"
    })
    expect(one(refused.xml, "Message")).toMatch(/^Currently, desiredSize equals minSize \(1\)/)
    // Terminated members leave the group once EC2 says terminated.
    await waitFor(
      "terminated members to leave",
      async () => (await admin.autoScalingGroup("gpu")).members.length === 1,
      FAST
    )
  })

  it("a member terminated through EC2 is replaced by the group; a launch failure is a Failed scaling activity", async () => {
    const [member] = await liveMembers("from-start")
    await ec2({ Action: "TerminateInstances", "InstanceId.1": member!.instanceId })
    await waitFor(
      "the group to replace it",
      async () => {
        const live = await liveMembers("from-start")
        return live.length === 1 && live[0]!.instanceId !== member!.instanceId
      },
      FAST
    )
    await admin.setLaunchFailure("from-start", "We currently do not have sufficient m5.large capacity.")
    await asg({ Action: "SetDesiredCapacity", AutoScalingGroupName: "from-start", DesiredCapacity: "2" })
    expect(await liveMembers("from-start")).toHaveLength(1)
    const acts = await asg({ Action: "DescribeScalingActivities", AutoScalingGroupName: "from-start" })
    expect(one(acts.xml, "StatusCode")).toBe("Failed")
    expect(one(acts.xml, "StatusMessage")).toBe("We currently do not have sufficient m5.large capacity.")
    await admin.setLaunchFailure("from-start")
    expect(await liveMembers("from-start")).toHaveLength(2)
    const stats = await admin.stats()
    expect(stats.calls.SetDesiredCapacity).toBeGreaterThan(0)
    expect(stats.calls.RunInstances ?? 0).toBe(0)
  })

  it("throttling injected for autoScaling answers as Auto Scaling throttles", async () => {
    await admin.injectFault({ kind: "throttle", target: "autoScaling" })
    const r = await asg({ Action: "DescribeAutoScalingGroups" })
    expect([r.status, one(r.xml, "Code")]).toEqual([400, "Throttling"])
    expect((await ec2({ Action: "DescribeInstances" })).status).toBe(200)
  })
})
