/**
 * AwsCloudProvider over the real AWS SDK against the in-memory fake cloud on loopback: per-call latency
 * of the provider's operations and how the terminate batcher coalesces concurrent terminations.
 *
 *   cd packages/repair-controller && ../../node_modules/.bin/node --conditions=source bench/aws-provider.ts [n=200]
 */
import { AdminClient, startFakeCloud } from "@nodemend/fake-cloud"
import { Effect, Schema } from "effect"
import { CloudProvider, type NodeRef } from "../src/cloud/CloudProvider.ts"
import { makeAwsClients } from "../src/cloud/aws/AwsClients.ts"
import { AwsCloudProvider } from "../src/cloud/aws/AwsCloudProvider.ts"
import { AwsConfig } from "../src/config/AwsConfig.ts"

const n = Number(process.argv[2] ?? 200)
const cloud = await startFakeCloud({
  region: "us-west-2",
  bootDelayMs: 0,
  terminateDelayMs: 0,
  clusterArn: "arn:aws:eks:us-west-2:111122223333:cluster/bench"
})
const admin = new AdminClient(cloud.url)
const config = Schema.decodeUnknownSync(AwsConfig)({
  region: "us-west-2",
  clusterArn: "arn:aws:eks:us-west-2:111122223333:cluster/bench",
  endpoints: { ec2: cloud.url, arcZonalShift: cloud.url },
  zonalShift: { enabled: true, cacheSeconds: 0 },
  terminationWaitSeconds: 0
})
const layer = AwsCloudProvider.layerWithClients(
  config,
  makeAwsClients(config, async () => ({ accessKeyId: "AKIDBENCH", secretAccessKey: "bench" }))
)

const nodes = async (count: number): Promise<NodeRef[]> => {
  const out: NodeRef[] = []
  for (let i = 0; i < count; i++) {
    const inst = await admin.adopt({
      nodeName: `bench-${i}-${Math.random()}`,
      instanceType: "p5.48xlarge",
      tags: { "nodemend.io/pool": "bench" },
      launchTemplateId: "lt-0123456789abcdef0"
    })
    out.push({ name: inst.nodeName, providerID: inst.providerID, labels: {}, annotations: {} })
  }
  return out
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!
const timeEach = <E>(
  label: string,
  items: NodeRef[],
  f: (p: CloudProvider["Service"], node: NodeRef) => Effect.Effect<unknown, E>
) =>
  Effect.gen(function* () {
    const p = yield* CloudProvider
    const ms: number[] = []
    for (const node of items) {
      const t0 = performance.now()
      yield* f(p, node)
      ms.push(performance.now() - t0)
    }
    console.log(
      `${label.padEnd(44)} n=${items.length}  p50 ${pct(ms, 0.5).toFixed(1)} ms  p95 ${pct(ms, 0.95).toFixed(1)} ms`
    )
  })

const program = Effect.gen(function* () {
  const p = yield* CloudProvider
  const a = yield* Effect.promise(() => nodes(n))
  yield* timeEach("describe (DescribeInstances)", a, (p, node) => p.describe(node))
  yield* timeEach("inspect (DescribeInstances + identity check)", a, (p, node) => p.inspect(node))
  yield* timeEach("launchReplacement (inspect + RunInstances)", a, (p, node) =>
    p
      .inspect(node)
      .pipe(
        Effect.flatMap((facts) =>
          p.launchReplacement(node, { facts, avoidZones: [], idempotencyToken: `b-${node.name}` })
        )
      )
  )
  yield* timeEach("terminate, sequential (Describe + batch 100 ms)", a.slice(0, Math.min(50, n)), (p, node) =>
    p.terminate(node)
  )
  yield* timeEach(
    "activeZonalShifts, uncached (GetManagedResource)",
    a.slice(0, 100),
    (p) => p.activeZonalShifts
  )

  const b = yield* Effect.promise(() => nodes(n))
  const callsBefore = (yield* Effect.promise(() => admin.stats())).calls.TerminateInstances ?? 0
  const t0 = performance.now()
  yield* Effect.all(
    b.map((node) => p.terminate(node)),
    { concurrency: "unbounded" }
  )
  const wall = performance.now() - t0
  const calls = ((yield* Effect.promise(() => admin.stats())).calls.TerminateInstances ?? 0) - callsBefore
  console.log(
    `terminate, ${n} concurrent`.padEnd(44),
    ` wall ${wall.toFixed(0)} ms  TerminateInstances calls: ${calls}`
  )
})

await Effect.runPromise(program.pipe(Effect.provide(layer)))
await cloud.close()
