// DescribeInstanceStatus and scheduled events, spoken by hand (the SDK's reading of them: repair-controller's
// test/aws/ScheduledEvents.test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AdminClient } from "../src/admin/AdminClient.ts"
import { type FakeCloud, startFakeCloud } from "../src/FakeCloudServer.ts"

let cloud: FakeCloud
let admin: AdminClient

const auth = () => {
  const d = new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "")
  return {
    "x-amz-date": d,
    authorization: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${d.slice(0, 8)}/us-west-2/ec2/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"a".repeat(64)}`
  }
}
async function ec2(params: Record<string, string>) {
  const res = await fetch(cloud.url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8", ...auth() },
    body: new URLSearchParams({ Version: "2016-11-15", ...params }).toString()
  })
  return { status: res.status, xml: await res.text() }
}
const all = (xml: string, tag: string) =>
  [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, "g"))].map((m) => m[1])
const one = (xml: string, tag: string) => all(xml, tag)[0]
const status = (params: Record<string, string>) => ec2({ Action: "DescribeInstanceStatus", ...params })
const ids = (n: number, from = 0) =>
  Object.fromEntries(
    Array.from({ length: n }, (_, i) => [
      `InstanceId.${i + 1}`,
      `i-${(from + i).toString(16).padStart(17, "0")}`
    ])
  )

/** Instances: three running, one stopped-like (terminated), created through the store. */
let running: string[] = []
let gone: string

beforeAll(async () => {
  cloud = await startFakeCloud({ region: "us-west-2", bootDelayMs: 0, terminateDelayMs: 0 })
  admin = new AdminClient(cloud.url)
  const launched = cloud.store.run({
    count: 4,
    imageId: "ami-1",
    instanceType: "m5.large",
    tags: {}
  }).instances
  await new Promise((r) => setTimeout(r, 30))
  running = launched.slice(0, 3).map((i) => i.instanceId)
  gone = launched[3]!.instanceId
  cloud.store.terminate([gone])
  await new Promise((r) => setTimeout(r, 30))
})
afterAll(() => cloud.close())

describe("DescribeInstanceStatus", () => {
  it("lists a scheduled event with EC2's element names; running instances only unless IncludeAllInstances", async () => {
    const [a] = running
    const e = await admin.scheduleEvent(a!, {
      code: "instance-retirement",
      notBefore: "2027-01-10T08:00:00.000Z",
      windowMinutes: 120
    })
    expect(e.instanceEventId).toMatch(/^instance-event-[0-9a-f]{17}$/)
    const r = await status({ "InstanceId.1": a! })
    expect(r.status).toBe(200)
    expect(r.xml).toContain("<DescribeInstanceStatusResponse")
    const item = /<eventsSet><item>(.*?)<\/item><\/eventsSet>/.exec(r.xml)?.[1] ?? ""
    expect(one(item, "instanceEventId")).toBe(e.instanceEventId)
    expect(one(item, "code")).toBe("instance-retirement")
    expect(one(item, "description")).toBe("The instance is running on degraded hardware")
    expect(one(item, "notBefore")).toBe("2027-01-10T08:00:00.000Z")
    expect(one(item, "notAfter")).toBe("2027-01-10T10:00:00.000Z")
    expect(all((await status({})).xml, "instanceId").sort()).toEqual([...running].sort())
    expect(all((await status({ IncludeAllInstances: "true" })).xml, "instanceId")).toContain(gone)
    expect(all((await status({ "InstanceId.1": gone })).xml, "instanceId")).toEqual([])
  })

  it("marks a completed or cancelled event in its description and keeps it listed", async () => {
    const [, b, c] = running
    const done = await admin.scheduleEvent(b!, { code: "system-reboot", notBeforeInMinutes: 60 })
    const cancelled = await admin.scheduleEvent(c!, { code: "instance-stop", notBeforeInMinutes: 60 })
    await admin.endEvent(b!, done.instanceEventId, "completed")
    await admin.endEvent(c!, cancelled.instanceEventId, "canceled")
    // A second end keeps the first outcome.
    await admin.endEvent(c!, cancelled.instanceEventId, "completed")
    const r = await status({ "InstanceId.1": b!, "InstanceId.2": c! })
    expect(all(r.xml, "description")).toEqual([
      "[Completed] The instance is scheduled for a system reboot",
      "[Canceled] The instance is running on degraded hardware"
    ])
    const unknown = await fetch(
      `${cloud.url}/admin/instances/${b}/events/instance-event-00000000000000000/end`,
      {
        method: "POST",
        body: JSON.stringify({ outcome: "completed" })
      }
    )
    expect(unknown.status).toBe(400)
  })

  it("filters on events (the instance is listed with all its events) and on the instance", async () => {
    const byCode = await status({ "Filter.1.Name": "event.code", "Filter.1.Value.1": "instance-retirement" })
    expect(all(byCode.xml, "instanceId")).toEqual([running[0]])
    const completed = await status({
      "Filter.1.Name": "event.description",
      "Filter.1.Value.1": "[Completed]*"
    })
    expect(all(completed.xml, "instanceId")).toEqual([running[1]])
    const zone = cloud.store.describe([running[0]!])[0]!.zone.name
    const inZone = await status({ "Filter.1.Name": "availability-zone", "Filter.1.Value.1": zone })
    expect(all(inZone.xml, "instanceId")).toContain(running[0])
    const bad = await status({ "Filter.1.Name": "event.colour", "Filter.1.Value.1": "x" })
    expect([bad.status, one(bad.xml, "Code")]).toEqual([400, "InvalidParameterValue"])
  })

  it("takes at most 100 ids, every one known; pages with MaxResults but not with ids", async () => {
    const tooMany = await status(ids(101))
    expect([tooMany.status, one(tooMany.xml, "Code")]).toEqual([400, "InvalidParameterValue"])
    const unknown = await status(ids(1, 0xabc))
    expect(one(unknown.xml, "Code")).toBe("InvalidInstanceID.NotFound")
    const both = await status({ "InstanceId.1": running[0]!, MaxResults: "5" })
    expect(one(both.xml, "Code")).toBe("InvalidParameterCombination")
    cloud.store.run({ count: 6, imageId: "ami-1", instanceType: "m5.large", tags: {} })
    await new Promise((r) => setTimeout(r, 30))
    const first = await status({ MaxResults: "5" })
    expect(all(first.xml, "instanceId")).toHaveLength(5)
    const token = one(first.xml, "nextToken")!
    const second = await status({ MaxResults: "5", NextToken: token })
    expect(all(second.xml, "instanceId")).toHaveLength(4)
    expect(one(second.xml, "nextToken")).toBeUndefined()
  })
})
