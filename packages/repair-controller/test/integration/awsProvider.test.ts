// AwsCloudProvider end to end at the provider level: fake cloud (EC2 Query + ARC over HTTP, real AWS
// SDK) whose instances are kwok Nodes in the real test cluster. Launch -> kwok Node Ready; terminate
// -> Node gone; throttling injected through the CLI -> retried, exactly one termination; zonal shift
// on/off through the CLI -> activeZonalShifts follows.
import {
  clients,
  createFakeNode,
  deleteNode,
  uniqueName,
  waitFor,
  waitForNodeCondition
} from "@nodemend/cluster-harness"
import { Effect, type Layer, Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CloudProvider, type NodeRef } from "../../src/cloud/CloudProvider.ts"
import { makeAwsClients } from "../../src/cloud/aws/AwsClients.ts"
import { AwsCloudProvider } from "../../src/cloud/aws/AwsCloudProvider.ts"
import { AwsConfig } from "../../src/config/AwsConfig.ts"
import { CLUSTER_ARN, type ClusterFakeCloud, startClusterFakeCloud } from "./awsFakeCloudSupport.ts"
import { waitForNodeGone } from "./helpers.ts"

const { core } = clients()
let cloud: ClusterFakeCloud
let layer: Layer.Layer<CloudProvider>
const POOL = uniqueName("awsprov")

const run = <A, E>(f: (p: CloudProvider["Service"]) => Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* f(yield* CloudProvider)
    }).pipe(Effect.provide(layer))
  )

const refOf = async (name: string): Promise<NodeRef> => {
  const n = await core.readNode({ name })
  return {
    name,
    providerID: n.spec?.providerID ?? "",
    labels: n.metadata?.labels ?? {},
    annotations: n.metadata?.annotations ?? {}
  }
}

beforeAll(async () => {
  cloud = await startClusterFakeCloud(core)
  const config = Schema.decodeUnknownSync(AwsConfig)({
    region: "us-west-2",
    clusterArn: CLUSTER_ARN,
    endpoints: { ec2: cloud.url, arcZonalShift: cloud.url },
    zonalShift: { enabled: true, cacheSeconds: 0 },
    terminationWaitSeconds: 30,
    poolLabel: "karpenter.sh/nodepool"
  })
  layer = AwsCloudProvider.layerWithClients(
    config,
    makeAwsClients(config, async () => ({ accessKeyId: "AKIDFAKE", secretAccessKey: "secret" }))
  )
})
afterAll(async () => {
  await cloud.stop()
})

describe("AwsCloudProvider + fake cloud + real cluster", () => {
  let seed = ""
  let replacementNode = ""

  it("adopts a kwok Node, then launches its replacement as a kwok Node that becomes Ready", async () => {
    seed = uniqueName("aws-seed")
    await createFakeNode(core, {
      name: seed,
      labels: {
        "karpenter.sh/nodepool": POOL,
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "topology.kubernetes.io/zone": "us-west-2b",
        "topology.k8s.aws/zone-id": "usw2-az2"
      },
      annotations: { "nodemend.io/launch-template-id": "lt-0123456789abcdef0" }
    })
    const adopted = await cloud.cli("adopt", seed)
    expect(adopted).toMatchObject({ nodeName: seed, zone: "us-west-2b", instanceType: "p5.48xlarge" })
    const node = await refOf(seed)
    expect(node.providerID).toMatch(/^aws:\/\/\/us-west-2b\/i-[0-9a-f]{17}$/)

    const facts = await run((p) => p.inspect(node))
    expect(facts).toMatchObject({ zone: "us-west-2b", launch: { launchTemplateId: "lt-0123456789abcdef0" } })
    const r = await run((p) =>
      p.launchReplacement(node, { facts, avoidZones: [], idempotencyToken: `e2e-${seed}` })
    )
    expect(r.zone).toBe("us-west-2b")
    replacementNode = r.nodeName!
    const ready = await waitForNodeCondition(core, replacementNode, "Ready", "True", { timeoutMs: 60_000 })
    expect(ready.spec?.providerID).toBe(`aws:///us-west-2b/${r.instanceId}`)
    expect(ready.metadata?.labels).toMatchObject({
      "karpenter.sh/nodepool": POOL,
      "node.kubernetes.io/instance-type": "p5.48xlarge",
      "topology.kubernetes.io/zone": "us-west-2b",
      "topology.k8s.aws/zone-id": "usw2-az2",
      "kwok.x-k8s.io/node": "fake"
    })
    expect(ready.metadata?.annotations?.["nodemend.io/launch-template-id"]).toBe("lt-0123456789abcdef0")
    expect(await run((p) => p.describe(node))).toBe("running")
  })

  it("reboot gives the Node a new boot id", async () => {
    const node = await refOf(replacementNode)
    const bootId = async () => (await core.readNode({ name: replacementNode })).status?.nodeInfo?.bootID
    // The fake cloud's mirror writes the instance's boot id into the Node's status just after creating it.
    const before = await waitFor("the Node's first boot id", async () => (await bootId()) || undefined)
    await run((p) => p.reboot(node))
    const after = await waitFor("a new boot id", async (seen) => {
      const now = await bootId()
      seen(now)
      return now !== undefined && now !== before ? now : undefined
    })
    expect(after).not.toBe(before)
    // The same Node and instance, rebooted: not replaced.
    expect((await core.readNode({ name: replacementNode })).spec?.providerID).toBe(node.providerID)
  })

  it("terminate -> instance terminated and its Node deleted; a second terminate changes nothing", async () => {
    const node = await refOf(replacementNode)
    expect(await run((p) => p.terminate(node))).toBe("terminated")
    await waitForNodeGone(core, replacementNode)
    expect(await run((p) => p.terminate(node))).toBe("terminated")
    const id = node.providerID.split("/").pop()!
    expect((await cloud.admin.stats()).terminationsStarted[id]).toBe(1)
  })

  it("throttling injected through the CLI is retried; still exactly one termination", async () => {
    await cloud.throttleEc2("TerminateInstances", 2)
    const node = await refOf(seed)
    const id = node.providerID.split("/").pop()!
    const before = (await cloud.admin.stats()).calls.TerminateInstances ?? 0
    expect(await run((p) => p.terminate(node))).toBe("terminated")
    const stats = await cloud.admin.stats()
    expect((stats.calls.TerminateInstances ?? 0) - before).toBe(3)
    expect(stats.terminationsStarted[id]).toBe(1)
    await waitForNodeGone(core, seed)
    await deleteNode(core, seed)
  })

  it("zonal shift and autoshift on/off through the CLI -> activeZonalShifts follows", async () => {
    expect(await run((p) => p.activeZonalShifts)).toEqual([])
    const shiftId = await cloud.startZonalShift("us-west-2b", "--minutes", "5")
    expect(await run((p) => p.activeZonalShifts)).toEqual([
      expect.objectContaining({
        kind: "zonal-shift",
        zoneId: "usw2-az2",
        zone: "us-west-2b",
        id: shiftId
      })
    ])
    await cloud.cli("shift", "cancel", shiftId)
    await cloud.cli("autoshift", "start", "--zone", "usw2-az3")
    expect(await run((p) => p.activeZonalShifts)).toEqual([
      expect.objectContaining({ kind: "autoshift", zoneId: "usw2-az3" })
    ])
    await cloud.cli("autoshift", "end", "--zone", "usw2-az3")
    expect(await run((p) => p.activeZonalShifts)).toEqual([])
  })
})
