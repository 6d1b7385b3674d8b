// Scheduled events on EC2 (`scheduledEvents`): the real AWS SDK against the fake cloud's DescribeInstanceStatus,
// which takes at most 100 instance ids a call and fails a call naming an id it does not know, as EC2 does.
import { AdminClient, type AdminInstance, type FakeCloud, startFakeCloud } from "@nodemend/fake-cloud"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { CloudProvider, type NodeRef } from "../../src/cloud/CloudProvider.ts"
import { AwsCloudProvider } from "../../src/cloud/aws/AwsCloudProvider.ts"
import { IDS_PER_CALL } from "../../src/cloud/aws/Ec2ScheduledEvents.ts"
import { awsConfig, clientsFor, nodeRefOf } from "./support.ts"

let cloud: FakeCloud
let admin: AdminClient
const fleet: AdminInstance[] = []
const FLEET = 250

beforeAll(async () => {
  cloud = await startFakeCloud({ region: "us-west-2", bootDelayMs: 10, terminateDelayMs: 10 })
  admin = new AdminClient(cloud.url)
  for (let i = 0; i < FLEET; i++)
    fleet.push(
      await admin.adopt({
        nodeName: `ip-10-8-${Math.floor(i / 250)}-${i % 250}.us-west-2.compute.internal`,
        zone: "us-west-2a"
      })
    )
}, 120_000)
afterAll(() => cloud.close())

const scheduledEvents = (refs: ReadonlyArray<NodeRef>) => {
  const config = awsConfig(cloud.url)
  return Effect.gen(function* () {
    const p = yield* CloudProvider
    if (p.scheduledEvents === undefined) throw new Error("the AWS provider has no scheduledEvents")
    return yield* p.scheduledEvents(refs)
  }).pipe(Effect.provide(AwsCloudProvider.layerWithClients(config, clientsFor(config))))
}
const calls = () =>
  Effect.promise(() => admin.stats()).pipe(Effect.map((s) => s.calls.DescribeInstanceStatus ?? 0))

describe("scheduledEvents (DescribeInstanceStatus)", () => {
  it.live("reads every Node's events, 100 instance ids a call, keyed by Node name; ended ones marked", () =>
    Effect.gen(function* () {
      const [a, b, c] = [fleet[3]!, fleet[120]!, fleet[249]!]
      const retire = yield* Effect.promise(() =>
        admin.scheduleEvent(a.instanceId, { code: "instance-retirement", notBefore: "2027-01-10T08:00:00Z" })
      )
      const reboot = yield* Effect.promise(() =>
        admin.scheduleEvent(b.instanceId, { code: "system-reboot", notBeforeInMinutes: 90 })
      )
      const stop = yield* Effect.promise(() =>
        admin.scheduleEvent(c.instanceId, { code: "instance-stop", notBeforeInMinutes: 30 })
      )
      yield* Effect.promise(() => admin.endEvent(c.instanceId, stop.instanceEventId, "canceled"))
      const before = yield* calls()
      const found = yield* scheduledEvents(fleet.map((i) => nodeRefOf(i)))
      expect((yield* calls()) - before).toBe(Math.ceil(FLEET / IDS_PER_CALL))
      expect([...found.keys()].sort()).toEqual([a.nodeName, b.nodeName, c.nodeName].sort())
      expect(found.get(a.nodeName)).toEqual([
        {
          id: retire.instanceEventId,
          code: "instance-retirement",
          description: "The instance is running on degraded hardware",
          notBefore: Date.parse("2027-01-10T08:00:00Z"),
          notAfter: Date.parse("2027-01-10T10:00:00Z")
        }
      ])
      expect(found.get(b.nodeName)?.[0]).toMatchObject({ id: reboot.instanceEventId, code: "system-reboot" })
      expect(found.get(b.nodeName)?.[0]?.ended).toBeUndefined()
      expect(found.get(c.nodeName)?.[0]).toMatchObject({ code: "instance-stop", ended: "canceled" })
    })
  )

  it.live("an instance id EC2 does not know costs its batch one more call, not the other Nodes' events", () =>
    Effect.gen(function* () {
      const a = fleet[3]!
      const ghost: NodeRef = {
        ...nodeRefOf(fleet[0]!),
        name: "ip-10-8-9-9.us-west-2.compute.internal",
        providerID: "aws:///us-west-2a/i-0fffffffffffffff0"
      }
      const before = yield* calls()
      const found = yield* scheduledEvents([ghost, nodeRefOf(a)])
      expect((yield* calls()) - before).toBe(2)
      expect([...found.keys()]).toEqual([a.nodeName])
    })
  )

  it.live("a Node whose providerID names no EC2 instance is not asked about", () =>
    Effect.gen(function* () {
      const before = yield* calls()
      const found = yield* scheduledEvents([{ ...nodeRefOf(fleet[0]!), providerID: "kwok://x" }])
      expect(found.size).toBe(0)
      expect((yield* calls()) - before).toBe(0)
    })
  )
})
