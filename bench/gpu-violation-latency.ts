/**
 * Push-path latency, measured from the source: a DCGM policy violation (DBE) is fired from a pthread inside the
 * C test double of libdcgm.so.4, and the clock stops when the AcceleratedHardwareReady change arrives through
 * a watch on the API server.
 *
 *   node --conditions=source bench/gpu-violation-latency.ts [faults=250] [warmup=20]
 *
 * Path: pthread -> koffi foreign-thread callback -> decode -> monitor -> ConditionWriter -> strategic-merge
 * PATCH of Node status -> watch event. The monitor and the writer run in this process (the same code the agent
 * binary wires, without its other monitors). Each fault i carries numerrors = i, so fault i is observed when a watch
 * event's message contains `detected <i> Nvidia Double Bit`. Faults are sequential (next one 10 ms after the
 * previous was observed). Not included: DCGM's own sampling (policy fields are sampled every 10 s on a real
 * host engine), which no agent can shorten.
 */
import { type V1Node, Watch } from "@kubernetes/client-node"
import { buildGpuDoubles, GpuDoubleInjector } from "@nodemend/dcgm-native/test-double"
import { Effect, Exit, Fiber, Layer, Schema, Scope } from "effect"
import {
  createKwokNode,
  kubeconfigPath,
  makeClients,
  percentile,
  sleep
} from "../packages/agent/bench/agent-harness.ts"
import { ConditionWriter, conditionWriterLayer } from "../packages/agent/src/k8s/condition-writer.ts"
import { kubeApiLayer } from "../packages/agent/src/k8s/kube-api.ts"
import type { Finding } from "../packages/agent/src/model.ts"
import { NvidiaLibraries } from "../packages/agent/src/monitors/nvidia/libraries.ts"
import { runNvidiaMonitor } from "../packages/agent/src/monitors/nvidia/monitor.ts"
import { NvidiaMonitorSettings } from "../packages/agent/src/monitors/nvidia/settings.ts"
import { XidDeduplicator } from "../packages/agent/src/monitors/nvidia/xid-deduplicator.ts"
import { hostWithGpus } from "../packages/agent/test/nvidia/gpu-host.ts"

const faults = Number(process.argv[2] ?? 250)
const warmup = Number(process.argv[3] ?? 20)
const TYPE = "AcceleratedHardwareReady"

const doubles = buildGpuDoubles()
const injector = new GpuDoubleInjector(doubles)
injector.reset()
injector.setGpuCount(8)
injector.nvmlSetDeviceCount(8)

const { kc, core } = makeClients()
const node = `bench-gpu-${Date.now().toString(36)}`
await createKwokNode(core, node)

const settings = Schema.decodeUnknownSync(NvidiaMonitorSettings)({
  dcgmLibraryPath: doubles.dcgm,
  nvmlLibraryPath: doubles.nvml,
  hostRoot: hostWithGpus(8)
})

const seen = new Map<number, number>()
/** When the monitor handed fault i to the ConditionWriter (the in-process part of the path). */
const submitted = new Map<number, number>()
let waiting: { i: number; resolve: () => void } | undefined
let ready = false
const watch = await new Watch(kc).watch(
  "/api/v1/nodes",
  { fieldSelector: `metadata.name=${node}`, allowWatchBookmarks: true, timeoutSeconds: 25 },
  (_type, obj: V1Node) => {
    const at = performance.now()
    const c = obj.status?.conditions?.find((x) => x.type === TYPE)
    if (c !== undefined) ready = true
    for (const m of (c?.message ?? "").matchAll(/detected (\d+) Nvidia Double Bit/g)) {
      const i = Number(m[1])
      if (!seen.has(i)) seen.set(i, at)
    }
    if (waiting !== undefined && seen.has(waiting.i)) waiting.resolve()
  },
  () => undefined
)

const layers = Layer.mergeAll(
  conditionWriterLayer({ managed: new Set([TYPE]), bootId: "bench-boot", heartbeatMs: 300_000 }).pipe(
    Layer.provide(kubeApiLayer(kubeconfigPath(), node))
  ),
  NvidiaLibraries.layer(settings),
  XidDeduplicator.layer
)
const scope = await Effect.runPromise(Scope.make())
const ctx = await Effect.runPromise(Layer.buildWithScope(layers, scope))
const monitor = await Effect.runPromise(
  Effect.gen(function* () {
    const writer = yield* ConditionWriter
    const submit = (fs: readonly Finding[]) =>
      Effect.suspend(() => {
        const at = performance.now()
        for (const f of fs) {
          const m = f._tag === "Detection" ? /detected (\d+) Nvidia Double Bit/.exec(f.message) : null
          if (m !== null && !submitted.has(Number(m[1]))) submitted.set(Number(m[1]), at)
        }
        return writer.submit(fs.filter((f) => f._tag === "Resolution" || f.severity === "Condition"))
      })
    return yield* Effect.forkDetach(
      runNvidiaMonitor({ settings }, { findings: submit, status: () => Effect.void }).pipe(Effect.scoped)
    )
  }).pipe(Effect.provide(ctx))
)

try {
  for (let t = 0; !ready || injector.registrationCount() === 0; t += 100) {
    if (t > 60_000) throw new Error("monitor did not start (no condition, or no policy registration)")
    await sleep(100)
  }
  await sleep(500)
  const latencies: number[] = []
  const inProcess: number[] = []
  for (let i = 1; i <= faults + warmup; i++) {
    const observed = new Promise<void>((resolve) => {
      waiting = { i, resolve }
    })
    const t0 = performance.now()
    injector.firePolicy({ condition: "DBE", gpuId: i % 8, location: 2, numerrors: i })
    const timedOut = await Promise.race([observed.then(() => false), sleep(5000).then(() => true)])
    if (timedOut) throw new Error(`fault ${i} not observed within 5 s`)
    if (i > warmup) {
      latencies.push(seen.get(i)! - t0)
      inProcess.push(submitted.get(i)! - t0)
    }
    await sleep(10)
  }
  latencies.sort((a, b) => a - b)
  inProcess.sort((a, b) => a - b)
  const f = (x: number) => `${x.toFixed(1)} ms`
  console.log(
    `faults: ${latencies.length} measured (after ${warmup} warm-up), DCGM DBE callback (foreign pthread) -> ${TYPE} change seen by a watch`
  )
  console.log(
    `p50 ${f(percentile(latencies, 50))}, p90 ${f(percentile(latencies, 90))}, p99 ${f(percentile(latencies, 99))}, max ${f(latencies.at(-1)!)} (goal p99 <= 50 ms)`
  )
  console.log(
    `of which pthread -> callback -> finding handed to the ConditionWriter: p50 ${f(percentile(inProcess, 50))}, p99 ${f(percentile(inProcess, 99))}, max ${f(inProcess.at(-1)!)}`
  )
} finally {
  watch.abort()
  await Effect.runPromise(Fiber.interrupt(monitor))
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await core.deleteNode({ name: node }).catch(() => undefined)
}
