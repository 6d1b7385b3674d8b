// Conformance: the AWS provider's EC2 (and Auto Scaling) calls against moto's server mode, an AWS
// imitation nobody here wrote. `moto_server` must be on PATH: npm test puts it there (tools/prereqs.mjs: moto
// pinned in a virtual environment under ~/.cache/nodemend); without it this file skips with a message saying so.
//
// ARC zonal shift: moto (checked 5.2.1) does not implement the arc-zonal-shift service, so the ARC
// client is exercised against the fake cloud only (AwsCloudProvider.test.ts); here zonal shift is off.
// ClientToken: moto records but does not deduplicate RunInstances by ClientToken, so idempotent
// launches are proven against the fake cloud, not here.
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { createServer } from "node:net"
import { Effect, Result, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CloudProvider, type NodeRef } from "../../src/cloud/CloudProvider.ts"
import { makeAwsClients } from "../../src/cloud/aws/AwsClients.ts"
import { AwsCloudProvider } from "../../src/cloud/aws/AwsCloudProvider.ts"
import { AwsConfig } from "../../src/config/AwsConfig.ts"
import { AutoScalingSdk, Ec2Sdk } from "../../src/cloud/aws/awsSdk.ts"
import { credentials, groupsOf } from "./support.ts"

function motoServerPath(): string | undefined {
  try {
    return execFileSync("sh", ["-c", "command -v moto_server"], { encoding: "utf8" }).trim() || undefined
  } catch {
    return undefined
  }
}
const MOTO = motoServerPath()
if (!MOTO) {
  console.warn('moto conformance tests SKIPPED: moto_server is not on PATH (pip install "moto[server]")')
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

let moto: ChildProcess | undefined
let endpoint = ""

describe.skipIf(!MOTO)("AWS provider against moto_server", () => {
  let subnetId = ""
  let launchTemplateId = ""
  const ec2 = () => makeAwsClients(config(), credentials).ec2

  const config = (overrides: Record<string, unknown> = {}) =>
    Schema.decodeUnknownSync(AwsConfig)({
      region: "us-west-2",
      endpoints: { ec2: endpoint, autoScaling: endpoint },
      zonalShift: { enabled: false },
      maxAttempts: 3,
      requestTimeoutSeconds: 10,
      terminationWaitSeconds: 20,
      subnets: subnetId ? [{ subnetId, zone: "us-west-2a" }] : [],
      ...overrides
    })

  const withProvider = <A, E>(
    f: (p: CloudProvider["Service"]) => Effect.Effect<A, E>,
    overrides: Record<string, unknown> = {}
  ) => {
    const c = config(overrides)
    return Effect.runPromise(
      Effect.gen(function* () {
        return yield* f(yield* CloudProvider)
      }).pipe(Effect.provide(AwsCloudProvider.layerWithClients(c, makeAwsClients(c, credentials))))
    )
  }

  // Named as a resource-name kubelet registers (the instance id), which EC2 vouches for.
  const nodeOf = (instanceId: string, annotations: Record<string, string> = {}): NodeRef => ({
    name: instanceId,
    providerID: `aws:///us-west-2a/${instanceId}`,
    labels: {
      "node.kubernetes.io/instance-type": "m5.large",
      "topology.kubernetes.io/zone": "us-west-2a",
      "nodemend.io/pool": "general"
    },
    annotations
  })

  beforeAll(async () => {
    const port = await freePort()
    endpoint = `http://127.0.0.1:${port}`
    moto = spawn(MOTO!, ["-H", "127.0.0.1", "-p", String(port)], { stdio: "ignore" })
    const deadline = Date.now() + 60_000
    for (;;) {
      try {
        if ((await fetch(`${endpoint}/moto-api/`)).status < 500) break
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`moto_server did not start on ${endpoint}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    const client = ec2()
    const vpc = await client.send(new Ec2Sdk.CreateVpcCommand({ CidrBlock: "10.0.0.0/16" }))
    const subnet = await client.send(
      new Ec2Sdk.CreateSubnetCommand({
        VpcId: vpc.Vpc!.VpcId!,
        CidrBlock: "10.0.1.0/24",
        AvailabilityZone: "us-west-2a"
      })
    )
    subnetId = subnet.Subnet!.SubnetId!
    const lt = await client.send(
      new Ec2Sdk.CreateLaunchTemplateCommand({
        LaunchTemplateName: "nodemend-conformance",
        LaunchTemplateData: { ImageId: "ami-12c6146b", InstanceType: "m5.large" }
      })
    )
    launchTemplateId = lt.LaunchTemplate!.LaunchTemplateId!
  }, 90_000)

  afterAll(() => {
    moto?.kill("SIGTERM")
  })

  const launchExisting = async () => {
    const out = await ec2().send(
      new Ec2Sdk.RunInstancesCommand({
        MinCount: 1,
        MaxCount: 1,
        SubnetId: subnetId,
        LaunchTemplate: { LaunchTemplateId: launchTemplateId, Version: "$Latest" },
        TagSpecifications: [
          { ResourceType: "instance", Tags: [{ Key: "nodemend.io/pool", Value: "general" }] }
        ]
      })
    )
    return out.Instances![0]!.InstanceId!
  }

  it.skip("ARC zonal shift: moto does not implement the arc-zonal-shift service (covered against the fake cloud)", () => {})

  it("describe -> running; terminate -> terminated; re-terminate is a no-op success", async () => {
    const id = await launchExisting()
    const node = nodeOf(id)
    const [before, first, second, after] = await withProvider((p) =>
      Effect.all([p.describe(node), p.terminate(node), p.terminate(node), p.describe(node)])
    )
    expect(["pending", "running"]).toContain(before)
    expect([first, second, after]).toEqual(["terminated", "terminated", "terminated"])
  })

  it("describe of an id moto never issued is not-found", async () => {
    const state = await withProvider((p) => p.describe(nodeOf("i-0123456789abcdef0")))
    expect(state).toBe("not-found")
  })

  it("launchReplacement: RunInstances from the template recorded on the instance, same subnet, pool tag", async () => {
    const id = await launchExisting()
    const r = await withProvider((p) =>
      p.inspect(nodeOf(id)).pipe(
        Effect.flatMap((facts) =>
          p.launchReplacement(nodeOf(id), {
            facts,
            avoidZones: [],
            idempotencyToken: `repair-${id}`,
            capacityFirst: false
          })
        )
      )
    )
    expect(r.instanceId).toMatch(/^i-[0-9a-f]{17}$/)
    expect(r.zone).toBe("us-west-2a")
    const d = await ec2().send(new Ec2Sdk.DescribeInstancesCommand({ InstanceIds: [r.instanceId!] }))
    const launched = d.Reservations![0]!.Instances![0]!
    expect(launched.SubnetId).toBe(subnetId)
    expect(launched.InstanceType).toBe("m5.large")
    const tags = Object.fromEntries((launched.Tags ?? []).map((t) => [t.Key, t.Value]))
    expect(tags).toMatchObject({
      "nodemend.io/pool": "general",
      "nodemend.io/replaces": id,
      "aws:ec2launchtemplate:id": launchTemplateId
    })
  })

  it("reboot: RebootInstances is accepted for a running instance", async () => {
    const id = await launchExisting()
    await withProvider((p) => p.reboot(nodeOf(id)))
    expect(await withProvider((p) => p.describe(nodeOf(id)))).toBe("running")
  })

  it("Auto Scaling member, remove first: TerminateInstanceInAutoScalingGroup keeps capacity; the group replaces the instance", async () => {
    const asg = makeAwsClients(config(), credentials).autoScaling
    await asg.send(
      new AutoScalingSdk.CreateAutoScalingGroupCommand({
        AutoScalingGroupName: "gpu-pool",
        LaunchTemplate: { LaunchTemplateId: launchTemplateId, Version: "$Latest" },
        MinSize: 1,
        MaxSize: 3,
        DesiredCapacity: 1,
        VPCZoneIdentifier: subnetId
      })
    )
    const members = async () =>
      (
        await asg.send(
          new AutoScalingSdk.DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: ["gpu-pool"] })
        )
      ).AutoScalingGroups![0]!
    const group = await members()
    const old = group.Instances![0]!.InstanceId!
    const node = nodeOf(old)
    const facts = await withProvider((p) => p.inspect(node))
    expect(facts.owner).toEqual({ kind: "autoScaling", group: "gpu-pool" })
    const removeFirst = { facts, avoidZones: [], capacityFirst: false }
    const [state, replacement, again] = await withProvider((p) =>
      Effect.all([
        p.terminate(node, { replaced: false }),
        groupsOf(p).launchReplacement(node, { ...removeFirst, idempotencyToken: `asg-${old}` }),
        groupsOf(p).launchReplacement(node, { ...removeFirst, idempotencyToken: `asg-${old}` })
      ])
    )
    expect(state).toBe("terminated")
    const after = await members()
    expect(after.DesiredCapacity).toBe(1)
    const live = (after.Instances ?? []).map((i) => i.InstanceId)
    expect(live).not.toContain(old)
    expect(live).toHaveLength(1)
    // The replacement reported is the instance the group launched, not one we launched.
    expect(replacement.instanceId).toBe(live[0])
    expect(again).toEqual(replacement)
    expect(replacement.zone).toBe("us-west-2a")
    // A restarted controller (fresh provider, no memory) asks with the facts it recorded (the owner): it finds
    // the group's replacement again, or waits for it, and never launches a second instance itself.
    const countInstances = async () =>
      ((await ec2().send(new Ec2Sdk.DescribeInstancesCommand({}))).Reservations ?? []).flatMap(
        (r) => r.Instances ?? []
      ).length
    const instancesBefore = await countInstances()
    const afterRestart = await withProvider((p) =>
      Effect.result(groupsOf(p).launchReplacement(node, { ...removeFirst, idempotencyToken: `asg-${old}` }))
    )
    if (Result.isSuccess(afterRestart)) expect(afterRestart.success.instanceId).toBe(replacement.instanceId)
    else
      expect(afterRestart.failure).toMatchObject({
        retryable: true,
        message: expect.stringContaining("waiting")
      })
    expect(await countInstances()).toBe(instancesBefore)
  })
})
