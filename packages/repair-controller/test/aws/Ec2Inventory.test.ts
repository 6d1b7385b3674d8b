// The fleet inventory on EC2 (`locate`): the real AWS SDK against the fake cloud's DescribeInstances, which
// refuses more than 200 filter values a call and pages as EC2 does.
import { AdminClient, type AdminInstance, type FakeCloud, startFakeCloud } from "@nodemend/fake-cloud"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { CloudProvider } from "../../src/cloud/CloudProvider.ts"
import { AwsCloudProvider } from "../../src/cloud/aws/AwsCloudProvider.ts"
import { inventoryFilters, locations, NAMES_PER_CALL } from "../../src/cloud/aws/Ec2Inventory.ts"
import { awsConfig, clientsFor, nodeRefOf } from "./support.ts"

let cloud: FakeCloud
let admin: AdminClient
const fleet: AdminInstance[] = []
const ZONES = ["us-west-2a", "us-west-2b", "us-west-2c"] as const
const FLEET = 400

beforeAll(async () => {
  cloud = await startFakeCloud({ region: "us-west-2", bootDelayMs: 10, terminateDelayMs: 10 })
  admin = new AdminClient(cloud.url)
  for (let i = 0; i < FLEET; i++)
    fleet.push(
      await admin.adopt({
        nodeName: `ip-10-9-${Math.floor(i / 250)}-${i % 250}.us-west-2.compute.internal`,
        instanceType: "m7i.large",
        zone: ZONES[i % 3]!,
        tags: i % 4 === 0 ? {} : { "nodemend.io/pool": i % 2 === 0 ? "gpu" : "general" }
      })
    )
}, 120_000)
afterAll(() => cloud.close())

const withProvider = <A, E>(f: (p: CloudProvider["Service"]) => Effect.Effect<A, E>) => {
  const config = awsConfig(cloud.url)
  return Effect.gen(function* () {
    return yield* f(yield* CloudProvider)
  }).pipe(Effect.provide(AwsCloudProvider.layerWithClients(config, clientsFor(config))))
}
const locate = (refs: Parameters<CloudProvider["Service"]["locate"]>[0]) =>
  withProvider((p) => p.locate(refs))
const calls = () =>
  Effect.promise(() => admin.stats()).pipe(Effect.map((s) => s.calls.DescribeInstances ?? 0))

describe("locate (the fleet inventory)", () => {
  it.live("places every Node of a 400-node fleet by the cloud's zone and pool tag, 190 names a call", () =>
    Effect.gen(function* () {
      const before = yield* calls()
      // Every node claims pool "gpu" and zone us-west-2a in its labels: the answer must not read them.
      const refs = fleet.map((i) => nodeRefOf(i, { labels: { "topology.kubernetes.io/zone": "us-west-2a" } }))
      const found = yield* locate(refs)
      expect(found.size).toBe(FLEET)
      fleet.forEach((inst, i) => {
        const pool = i % 4 === 0 ? undefined : i % 2 === 0 ? "gpu" : "general"
        expect(found.get(inst.nodeName)).toEqual({ zone: ZONES[i % 3], ...(pool ? { pool } : {}) })
      })
      expect((yield* calls()) - before).toBe(Math.ceil(FLEET / NAMES_PER_CALL))
    })
  )

  it.live("a name no live instance has is absent: unknown, terminated, or another instance's id", () =>
    Effect.gen(function* () {
      const gone = fleet[7]!
      yield* withProvider((p) => p.terminate(nodeRefOf(gone)))
      const impostor = { ...nodeRefOf(fleet[8]!), name: "ip-10-200-0-1.us-west-2.compute.internal" }
      const found = yield* locate([nodeRefOf(gone), impostor, nodeRefOf(fleet[9]!)])
      expect([...found.keys()]).toEqual([fleet[9]!.nodeName])
    })
  )
})

describe("inventoryFilters / locations (pure)", () => {
  it("never puts more than EC2's 200 filter values in one call", () => {
    const names = Array.from({ length: 1000 }, (_, i) => `ip-10-0-${i >> 8}-${i & 255}.ec2.internal`)
    const sets = inventoryFilters([
      ...names,
      "i-0123456789abcdef0",
      "i-0123456789abcdef1.us-west-2.compute.internal"
    ])
    for (const set of sets)
      expect(set.reduce((n, f) => n + (f.Values?.length ?? 0), 0)).toBeLessThanOrEqual(200)
    expect(
      sets.flatMap((s) => s.filter((f) => f.Name === "instance-id").flatMap((f) => f.Values ?? []))
    ).toEqual(["i-0123456789abcdef0", "i-0123456789abcdef1"])
    expect(sets.filter((s) => s[0]?.Name === "private-dns-name")).toHaveLength(
      Math.ceil(1000 / NAMES_PER_CALL)
    )
  })

  it("binds a name to an instance as inspect does: DNS name, its first label, or the id", () => {
    const inst = (id: string, dns: string, zone: string) => ({
      InstanceId: id,
      PrivateDnsName: dns,
      Placement: { AvailabilityZone: zone },
      Tags: [{ Key: "pool", Value: "p" }]
    })
    const found = locations(
      [
        "ip-10-0-0-1",
        "i-00000000000000002.us-west-2.compute.internal",
        "ip-10-0-0-3.ec2.internal",
        "ip-10-0-0-9"
      ],
      [
        inst("i-00000000000000001", "ip-10-0-0-1.ec2.internal", "z1"),
        inst("i-00000000000000002", "ip-10-0-0-2.ec2.internal", "z2"),
        inst("i-00000000000000003", "ip-10-0-0-3.ec2.internal", "z3")
      ],
      "pool"
    )
    expect(Object.fromEntries(found)).toEqual({
      "ip-10-0-0-1": { zone: "z1", pool: "p" },
      "i-00000000000000002.us-west-2.compute.internal": { zone: "z2", pool: "p" },
      "ip-10-0-0-3.ec2.internal": { zone: "z3", pool: "p" }
    })
  })
})
