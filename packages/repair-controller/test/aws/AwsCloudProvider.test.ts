// AwsCloudProvider against the fake cloud's EC2 Query and ARC endpoints (real AWS SDK on the wire).
import { AdminClient, type FakeCloud, startFakeCloud } from "@nodemend/fake-cloud"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "@effect/vitest"
import { CloudProvider } from "../../src/cloud/CloudProvider.ts"
import { AwsCloudProvider } from "../../src/cloud/aws/AwsCloudProvider.ts"
import type { AwsConfigInput } from "../../src/config/AwsConfig.ts"
import { awsConfig, clientsFor, LAUNCH_TEMPLATE, nodeRefOf } from "./support.ts"

let cloud: FakeCloud
let admin: AdminClient

beforeAll(async () => {
  cloud = await startFakeCloud({
    region: "us-west-2",
    bootDelayMs: 10,
    terminateDelayMs: 50,
    clusterArn: "arn:aws:eks:us-west-2:111122223333:cluster/demo"
  })
  admin = new AdminClient(cloud.url)
})
afterAll(() => cloud.close())
beforeEach(async () => {
  await admin.clearFaults()
  await admin.cancelAllZonalShifts()
})

const provider = (overrides: Partial<AwsConfigInput> = {}) => {
  const config = awsConfig(cloud.url, overrides)
  return AwsCloudProvider.layerWithClients(config, clientsFor(config))
}
const withProvider =
  (overrides: Partial<AwsConfigInput> = {}) =>
  <A, E>(f: (p: CloudProvider["Service"]) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.gen(function* () {
      return yield* f(yield* CloudProvider)
    }).pipe(Effect.provide(provider(overrides)))

const adoptNode = (zone = "us-west-2a", fromTemplate = true) =>
  Effect.promise(() =>
    admin.adopt({
      nodeName: `node-${Math.random().toString(36).slice(2, 8)}`,
      instanceType: "p5.48xlarge",
      zone,
      tags: { "nodemend.io/pool": "gpu" },
      ...(fromTemplate ? { launchTemplateId: LAUNCH_TEMPLATE } : {})
    })
  )
const calls = (action: string) =>
  Effect.promise(() => admin.stats()).pipe(Effect.map((s) => s.calls[action] ?? 0))
const started = (id: string) =>
  Effect.promise(() => admin.stats()).pipe(Effect.map((s) => s.terminationsStarted[id] ?? 0))

describe("describe / terminate", () => {
  it.live("terminates once, waits for terminated; a second terminate makes no EC2 call", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const i = yield* adoptNode()
        const node = nodeRefOf(i)
        expect(yield* p.describe(node)).toBe("running")
        expect(yield* p.terminate(node)).toBe("terminated")
        const callsAfterFirst = yield* calls("TerminateInstances")
        expect(yield* p.terminate(node)).toBe("terminated")
        expect(yield* calls("TerminateInstances")).toBe(callsAfterFirst)
        expect(yield* started(i.instanceId)).toBe(1)
        expect(yield* p.describe(node)).toBe("terminated")
      })
    )
  )

  it.live(
    "throttled TerminateInstances (RequestLimitExceeded) is retried: still exactly one termination",
    () =>
      withProvider()((p) =>
        Effect.gen(function* () {
          const i = yield* adoptNode()
          yield* Effect.promise(() =>
            admin.injectFault({ kind: "throttle", target: "ec2", action: "TerminateInstances", count: 2 })
          )
          const before = yield* calls("TerminateInstances")
          expect(yield* p.terminate(nodeRefOf(i))).toBe("terminated")
          expect((yield* calls("TerminateInstances")) - before).toBe(3)
          expect(yield* started(i.instanceId)).toBe(1)
        })
      )
  )

  it.live("a timeout after EC2 acted is retried without a second termination", () =>
    withProvider({ requestTimeoutSeconds: 0.5 })((p) =>
      Effect.gen(function* () {
        const i = yield* adoptNode()
        yield* Effect.promise(() =>
          admin.injectFault({ kind: "slow", target: "ec2", action: "TerminateInstances", delayMs: 2000 })
        )
        const before = yield* calls("TerminateInstances")
        const state = yield* p.terminate(nodeRefOf(i))
        expect(["shutting-down", "terminated"]).toContain(state)
        expect((yield* calls("TerminateInstances")) - before).toBeGreaterThanOrEqual(2)
        expect(yield* started(i.instanceId)).toBe(1)
      })
    )
  )

  it.live("5xx on DescribeInstances beyond maxAttempts surfaces as a retryable CloudError", () =>
    withProvider({ maxAttempts: 2 })((p) =>
      Effect.gen(function* () {
        const i = yield* adoptNode()
        yield* Effect.promise(() =>
          admin.injectFault({ kind: "error", target: "ec2", action: "DescribeInstances", count: 2 })
        )
        const err = yield* Effect.flip(p.terminate(nodeRefOf(i)))
        expect(err).toMatchObject({ _tag: "CloudError", operation: "DescribeInstances", retryable: true })
        expect(err.message).toContain("InternalError")
        expect(yield* started(i.instanceId)).toBe(0)
      })
    )
  )

  it.live("concurrent terminations share one TerminateInstances call", () =>
    withProvider({ terminateBatchWindowMs: 1500 })((p) =>
      Effect.gen(function* () {
        const nodes = [yield* adoptNode(), yield* adoptNode("us-west-2b"), yield* adoptNode("us-west-2c")]
        const before = yield* calls("TerminateInstances")
        const states = yield* Effect.all(
          nodes.map((n) => p.terminate(nodeRefOf(n))),
          { concurrency: "unbounded" }
        )
        expect(states).toEqual(["terminated", "terminated", "terminated"])
        expect((yield* calls("TerminateInstances")) - before).toBe(1)
      })
    )
  )

  it.live("a malformed providerID is InvalidProviderID and nothing is called", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const before = yield* calls("DescribeInstances")
        const err = yield* Effect.flip(
          p.terminate({ name: "n", providerID: "aws:///us-west-2a/node-1", labels: {}, annotations: {} })
        )
        expect(err._tag).toBe("InvalidProviderID")
        expect(yield* calls("DescribeInstances")).toBe(before)
      })
    )
  )

  it.live("an instance EC2 does not know is not-found (gone), and terminate calls nothing", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const node = {
          name: "n",
          providerID: "aws:///us-west-2a/i-00000000000000001",
          labels: {},
          annotations: {}
        }
        const before = yield* calls("TerminateInstances")
        expect(yield* p.describe(node)).toBe("not-found")
        expect(yield* p.terminate(node)).toBe("not-found")
        expect(yield* calls("TerminateInstances")).toBe(before)
      })
    )
  )
})

describe("reboot", () => {
  it.live("RebootInstances on a running instance gives it a new boot id", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const i = yield* adoptNode()
        yield* p.reboot(nodeRefOf(i))
        const after = (yield* Effect.promise(() => admin.instances())).find(
          (x) => x.instanceId === i.instanceId
        )!
        expect(after.bootId).not.toBe(i.bootId)
        yield* p.terminate(nodeRefOf(i))
        const err = yield* Effect.flip(p.reboot(nodeRefOf(i)))
        expect(err).toMatchObject({ _tag: "CloudError", retryable: false })
      })
    )
  )
})

describe("inspect: the instance must be the node's", () => {
  it.live("facts come from EC2: type, subnet, template, pool tag, zone", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const i = yield* adoptNode("us-west-2b")
        const facts = yield* p.inspect(nodeRefOf(i))
        expect(facts).toMatchObject({
          instanceId: i.instanceId,
          state: "running",
          zone: "us-west-2b",
          pool: "gpu",
          launch: {
            instanceType: "p5.48xlarge",
            subnetId: "subnet-0fake00000000000b",
            launchTemplateId: LAUNCH_TEMPLATE,
            launchTemplateVersion: "$Default"
          }
        })
      })
    )
  )

  it.live("attack: a node naming another node's instance in its providerID is refused", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const victim = yield* adoptNode()
        const attacker = yield* adoptNode()
        const forged = { ...nodeRefOf(attacker), providerID: victim.providerID }
        const err = yield* Effect.flip(p.inspect(forged))
        expect(err._tag).toBe("InstanceMismatch")
        expect(err.message).toContain(`is not node ${attacker.nodeName}`)
      })
    )
  )

  it.live("an instance EC2 does not know is refused, not guessed at", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const err = yield* Effect.flip(
          p.inspect({
            name: "n",
            providerID: "aws:///us-west-2a/i-0aaaaaaaaaaaaaaaa",
            labels: {},
            annotations: {}
          })
        )
        expect(err._tag).toBe("InstanceMismatch")
      })
    )
  )
})

describe("launchReplacement", () => {
  it.live(
    "RunInstances from the instance's launch template, same subnet, pool tag; ClientToken makes it idempotent",
    () =>
      withProvider()((p) =>
        Effect.gen(function* () {
          const i = yield* adoptNode("us-west-2b")
          const node = nodeRefOf(i)
          const facts = yield* p.inspect(node)
          const r1 = yield* p.launchReplacement(node, {
            facts,
            avoidZones: [],
            idempotencyToken: `repair-${i.instanceId}`,
            capacityFirst: false
          })
          const r2 = yield* p.launchReplacement(node, {
            facts,
            avoidZones: [],
            idempotencyToken: `repair-${i.instanceId}`,
            capacityFirst: false
          })
          expect(r2.instanceId).toBe(r1.instanceId)
          expect(r1.zone).toBe("us-west-2b")
          expect(r1.nodeName).toMatch(/^ip-10-2-\d+-\d+\.us-west-2\.compute\.internal$/)
          const launched = (yield* Effect.promise(() => admin.instances())).find(
            (x) => x.instanceId === r1.instanceId
          )!
          expect(launched).toMatchObject({
            instanceType: "p5.48xlarge",
            subnetId: "subnet-0fake00000000000b"
          })
          expect(launched.tags).toMatchObject({
            "nodemend.io/pool": "gpu",
            "nodemend.io/replaces": i.instanceId,
            "aws:ec2launchtemplate:id": "lt-0123456789abcdef0",
            "aws:ec2launchtemplate:version": "$Default"
          })
        })
      )
  )

  it.live("attack: labels and annotations the node set on itself do not steer the launch", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const i = yield* adoptNode("us-west-2a")
        const node = nodeRefOf(i, {
          labels: { "node.kubernetes.io/instance-type": "u-24tb1.112xlarge", "nodemend.io/pool": "other" },
          annotations: {
            "nodemend.io/launch-template-id": "lt-0evil000000000000",
            "nodemend.io/subnet-id": "subnet-0evil0000000000"
          }
        })
        const facts = yield* p.inspect(node)
        const r = yield* p.launchReplacement(node, {
          facts,
          avoidZones: [],
          idempotencyToken: `atk-${i.instanceId}`,
          capacityFirst: false
        })
        const launched = (yield* Effect.promise(() => admin.instances())).find(
          (x) => x.instanceId === r.instanceId
        )!
        expect(launched.instanceType).toBe("p5.48xlarge")
        expect(launched.subnetId).toBe("subnet-0fake00000000000a")
        expect(launched.tags).toMatchObject({
          "nodemend.io/pool": "gpu",
          "aws:ec2launchtemplate:id": LAUNCH_TEMPLATE
        })
      })
    )
  )

  it.live("avoids a shifted zone (by zone id) using a configured subnet elsewhere", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const i = yield* adoptNode("us-west-2a")
        const facts = yield* p.inspect(nodeRefOf(i))
        const r = yield* p.launchReplacement(nodeRefOf(i), {
          facts,
          avoidZones: ["usw2-az1"],
          idempotencyToken: `t-${i.instanceId}`,
          capacityFirst: false
        })
        expect(r.zone).toBe("us-west-2b")
        const err = yield* Effect.flip(
          p.launchReplacement(nodeRefOf(i), {
            facts,
            avoidZones: ["us-west-2a", "us-west-2b"],
            idempotencyToken: `u-${i.instanceId}`,
            capacityFirst: false
          })
        )
        expect(err).toMatchObject({ _tag: "CloudError", retryable: false })
        expect(err.message).toContain("shifted away")
      })
    )
  )

  it.live(
    "inspect says who owns an instance from EC2's tags: standalone (template), unknown (no template)",
    () =>
      withProvider()((p) =>
        Effect.gen(function* () {
          expect((yield* p.inspect(nodeRefOf(yield* adoptNode()))).owner).toEqual({ kind: "standalone" })
          const none = (yield* p.inspect(nodeRefOf(yield* adoptNode("us-west-2a", false)))).owner
          expect(none.kind).toBe("unknown")
          expect(none.kind === "unknown" ? none.why : "").toContain("aws:ec2launchtemplate:id")
        })
      )
  )

  it.live("an instance not launched from a template is a clear non-retryable error", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const i = yield* adoptNode("us-west-2a", false)
        const node = nodeRefOf(i, { annotations: { "nodemend.io/launch-template-id": LAUNCH_TEMPLATE } })
        const facts = yield* p.inspect(node)
        const err = yield* Effect.flip(
          p.launchReplacement(node, { facts, avoidZones: [], idempotencyToken: "x", capacityFirst: false })
        )
        expect(err).toMatchObject({ _tag: "CloudError", retryable: false })
        expect(err.message).toContain("aws:ec2launchtemplate:id")
      })
    )
  )
})

describe("activeZonalShifts", () => {
  it.live(
    "without aws.clusterArn: a non-retryable error that says why, so the gate stands repairs down",
    () =>
      Effect.gen(function* () {
        const { clusterArn: _arn, ...config } = awsConfig(cloud.url, {
          zonalShift: { enabled: true, cacheSeconds: 0 }
        })
        const p = yield* CloudProvider.pipe(
          Effect.provide(AwsCloudProvider.layerWithClients(config, clientsFor(config)))
        )
        {
          const err = yield* Effect.flip(p.activeZonalShifts)
          expect(err).toMatchObject({ _tag: "CloudError", retryable: false })
          expect(err.message).toContain("aws.clusterArn is not set")
        }
      })
  )

  it.live("follows zonal shifts and autoshifts started and ended on the fake (no cache)", () =>
    withProvider({ zonalShift: { enabled: true, cacheSeconds: 0 } })((p) =>
      Effect.gen(function* () {
        expect(yield* p.activeZonalShifts).toEqual([])
        const s = yield* Effect.promise(() =>
          admin.startZonalShift({ awayFrom: "us-west-2a", expiresInMinutes: 10 })
        )
        expect(yield* p.activeZonalShifts).toEqual([
          expect.objectContaining({
            kind: "zonal-shift",
            zoneId: "usw2-az1",
            zone: "us-west-2a",
            id: s.zonalShiftId
          })
        ])
        yield* Effect.promise(() => admin.cancelZonalShift(s.zonalShiftId))
        yield* Effect.promise(() => admin.startAutoshift("usw2-az2"))
        expect(yield* p.activeZonalShifts).toEqual([
          expect.objectContaining({ kind: "autoshift", zoneId: "usw2-az2", zone: "us-west-2b" })
        ])
        yield* Effect.promise(() => admin.endAutoshift("usw2-az2"))
        expect(yield* p.activeZonalShifts).toEqual([])
      })
    )
  )

  it.live("names the zone of a shift no node has shown yet via DescribeAvailabilityZones (once)", () =>
    withProvider({ subnets: [], zonalShift: { enabled: true, cacheSeconds: 0 } })((p) =>
      Effect.gen(function* () {
        yield* Effect.promise(() => admin.startZonalShift({ awayFrom: "usw2-az3" }))
        const before = yield* calls("DescribeAvailabilityZones")
        expect(yield* p.activeZonalShifts).toEqual([
          expect.objectContaining({ zoneId: "usw2-az3", zone: "us-west-2c" })
        ])
        expect(yield* p.activeZonalShifts).toEqual([
          expect.objectContaining({ zoneId: "usw2-az3", zone: "us-west-2c" })
        ])
        expect((yield* calls("DescribeAvailabilityZones")) - before).toBe(1)
      })
    )
  )

  it.effect("caches the answer for cacheSeconds (TestClock)", () =>
    withProvider()((p) =>
      Effect.gen(function* () {
        const s = yield* Effect.promise(() => admin.startZonalShift({ awayFrom: "usw2-az3" }))
        const before = yield* calls("GetManagedResource")
        expect((yield* p.activeZonalShifts).map((x) => x.zoneId)).toEqual(["usw2-az3"])
        yield* Effect.promise(() => admin.cancelZonalShift(s.zonalShiftId))
        yield* TestClock.adjust("29 seconds")
        expect((yield* p.activeZonalShifts).map((x) => x.zoneId)).toEqual(["usw2-az3"])
        expect((yield* calls("GetManagedResource")) - before).toBe(1)
        yield* TestClock.adjust("2 seconds")
        expect(yield* p.activeZonalShifts).toEqual([])
        expect((yield* calls("GetManagedResource")) - before).toBe(2)
      })
    )
  )

  it.live("falls back to ListZonalShifts + ListAutoshifts when GetManagedResource fails", () =>
    withProvider({ zonalShift: { enabled: true, cacheSeconds: 0 }, maxAttempts: 1 })((p) =>
      Effect.gen(function* () {
        yield* Effect.promise(() => admin.startZonalShift({ awayFrom: "usw2-az2" }))
        yield* Effect.promise(() =>
          admin.injectFault({ kind: "error", target: "arc", action: "GetManagedResource" })
        )
        expect((yield* p.activeZonalShifts).map((x) => [x.kind, x.zone])).toEqual([
          ["zonal-shift", "us-west-2b"]
        ])
      })
    )
  )

  it.live(
    "fails (for the fail-closed gate) when ARC cannot answer at all, and does not cache the failure",
    () =>
      withProvider({ maxAttempts: 2 })((p) =>
        Effect.gen(function* () {
          yield* Effect.promise(() => admin.injectFault({ kind: "throttle", target: "arc", count: 6 }))
          const err = yield* Effect.flip(p.activeZonalShifts)
          expect(err).toMatchObject({ _tag: "CloudError", retryable: true })
          expect(err.message).toContain("ThrottlingException")
          expect(yield* p.activeZonalShifts).toEqual([])
        })
      )
  )

  it.live("zonalShift.enabled=false never calls ARC", () =>
    withProvider({ zonalShift: { enabled: false, cacheSeconds: 30 } })((p) =>
      Effect.gen(function* () {
        const before = yield* calls("GetManagedResource")
        expect(yield* p.activeZonalShifts).toEqual([])
        expect(yield* calls("GetManagedResource")).toBe(before)
      })
    )
  )
})
