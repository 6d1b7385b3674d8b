/**
 * Fake-cloud faults during repairs (`cloudProvider: aws`, the real controller binary): throttling storms, 5xx
 * bursts, a TerminateInstances that answers after the client gave up, instances that never reach terminated,
 * RunInstances capacity errors. Each scenario has its own cloud (clean call counts) and `repairs` broken nodes,
 * one per pool of 5. Checked: every repair ends (Succeeded, or Failed with a reason where the cloud never
 * recovers), the fleet invariants of fleet.ts, and the EC2 calls per repair stay bounded (no tight loop).
 */
import { createServer, request } from "node:http"
import { clients, createTestNamespace, deleteNamespace, uniqueName } from "@nodemend/cluster-harness"
import type { FaultSpec } from "@nodemend/fake-cloud"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  checkFleet,
  controllers,
  type Fleet,
  pick,
  recordFigures,
  setKernelReady,
  startFleet,
  type Target,
  trialConfig,
  useFakeCredentials,
  waitForAllEnded,
  watchTaints
} from "./fleet.ts"

const { core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
const ctl = controllers(kubeconfig)
let ns = ""
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  useFakeCredentials()
  ns = await createTestNamespace(core, "rel-cloud")
})
afterEach(async (ctx) => {
  await ctl.killAll(ctx.task.result?.state === "fail")
  for (const f of cleanups.splice(0)) await f()
})
afterAll(async () => {
  await deleteNamespace(core, ns)
})

/**
 * An EC2 endpoint in front of the fake cloud that answers the next `count` RunInstances with
 * InsufficientInstanceCapacity (HTTP 500, the EC2 error document), as EC2 does when a type is sold out in a zone.
 */
const capacityErrors = async (upstream: string, count: number) => {
  let left = count
  const answered = { count: 0 }
  const target = new URL(upstream)
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks)
      if (left > 0 && new URLSearchParams(body.toString()).get("Action") === "RunInstances") {
        left--
        answered.count++
        res.writeHead(500, { "content-type": "text/xml" })
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>InsufficientInstanceCapacity</Code><Message>We currently do not have sufficient p5.48xlarge capacity in the Availability Zone you requested.</Message></Error></Errors><RequestID>rel-${left}</RequestID></Response>`
        )
        return
      }
      const up = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        }
      )
      up.on("error", () => res.destroy())
      up.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const a = server.address()
  const port = typeof a === "object" && a !== null ? a.port : 0
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  )
  return { url: `http://127.0.0.1:${port}`, answered }
}

interface Scenario {
  readonly name: string
  readonly faults?: ReadonlyArray<FaultSpec>
  readonly cloud?: { terminateDelayMs?: number }
  /** RunInstances capacity errors before the cloud has capacity again. */
  readonly capacityErrors?: number
  readonly over?: Record<string, unknown>
  readonly awsOver?: Record<string, unknown>
  /** What every repair must end as. */
  readonly expect: "Succeeded" | "Failed"
  /** Bound on EC2 calls per repair (all actions; launching the pools is not counted). */
  readonly maxCallsPerRepair: number
}

const run = async (sc: Scenario) => {
  const repairs = pick(2, 10)
  const tag = uniqueName(sc.name).slice(0, 24)
  const pools = Array.from({ length: repairs }, (_, i) => `${tag}-p${i}`)
  const fleet: Fleet = await startFleet(core, pools, 5, sc.cloud ?? {})
  cleanups.push(() => fleet.stop(core))
  const baseline = (await fleet.admin.stats()).calls
  const targets: Target[] = pools.map((pool) => {
    const node = fleet.pools[pool]![0]!
    return { node, pool, instanceId: fleet.instanceOf(node).instanceId }
  })
  const capacity =
    sc.capacityErrors === undefined ? undefined : await capacityErrors(fleet.cloud.url, sc.capacityErrors)
  const endpoint = capacity?.url ?? fleet.cloud.url
  const config = trialConfig(
    ns,
    endpoint,
    pools,
    { policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 1 }], ...sc.over },
    sc.awsOver
  )
  for (const f of sc.faults ?? []) await fleet.admin.injectFault(f)
  const taints = watchTaints(core, pools)
  const started = Date.now()
  await ctl.start(config, `${tag}-ctl`)
  await Promise.all(targets.map((t) => setKernelReady(core, t.node, "False")))
  await waitForAllEnded(core, ns, targets, 240_000)
  const seconds = Math.round((Date.now() - started) / 100) / 10
  const outcome = await checkFleet(core, ns, fleet, targets, await taints.stop(), {
    allowFailed: sc.expect === "Failed"
  })
  // Calls the fake cloud served, plus the RunInstances the capacity endpoint answered with an error itself.
  const calls = Object.fromEntries(
    Object.entries(outcome.calls).map(([a, n]) => [
      a,
      n - (baseline[a] ?? 0) + (a === "RunInstances" ? (capacity?.answered.count ?? 0) : 0)
    ])
  )
  const total = Object.values(calls).reduce((a, b) => a + b, 0)
  const stats = await fleet.admin.stats()
  const terminationEffects = targets.map((t) => stats.terminationsStarted[t.instanceId] ?? 0)
  recordFigures(`cloud-${sc.name}`, {
    repairs,
    seconds,
    succeeded: outcome.succeeded,
    failed: outcome.failed,
    ec2Calls: calls,
    ec2CallsPerRepair: Math.round((total / repairs) * 10) / 10,
    terminationEffects,
    violations: outcome.violations
  })
  expect(outcome.violations).toEqual([])
  if (sc.expect === "Succeeded") expect(outcome.succeeded).toBe(repairs)
  else expect(outcome.failed).toHaveLength(repairs)
  expect(total / repairs).toBeLessThanOrEqual(sc.maxCallsPerRepair)
  return outcome
}

describe("fake-cloud faults during repairs: bounded retries, every repair ends", () => {
  it("throttling storm (RequestLimitExceeded on every EC2 call for a while)", async () => {
    await run({
      name: "throttle",
      faults: [{ kind: "throttle", target: "ec2", count: 40 }],
      expect: "Succeeded",
      maxCallsPerRepair: 40
    })
  })

  it("5xx bursts (InternalError 500 and Unavailable 503)", async () => {
    await run({
      name: "5xx",
      faults: [
        { kind: "error", target: "ec2", status: 500, count: 10 },
        { kind: "error", target: "ec2", status: 503, count: 10 }
      ],
      expect: "Succeeded",
      maxCallsPerRepair: 30
    })
  })

  it("slow TerminateInstances: answered after the client timed out (the termination happened)", async () => {
    const f = await run({
      name: "slowterm",
      faults: [{ kind: "slow", target: "ec2", action: "TerminateInstances", delayMs: 5000, count: 3 }],
      expect: "Succeeded",
      maxCallsPerRepair: 30
    })
    expect(f.succeeded).toBeGreaterThan(0)
  })

  it("instances that never reach terminated: the repair ends Failed, no replacement, polling bounded", async () => {
    await run({
      name: "neverterm",
      cloud: { terminateDelayMs: 3_600_000 },
      over: { timeouts: { terminateSeconds: 12 } },
      awsOver: { terminationWaitSeconds: 2 },
      expect: "Failed",
      maxCallsPerRepair: 30
    })
  })

  it("RunInstances capacity errors for a while: retried with backoff, then the replacement launches", async () => {
    await run({
      name: "capacity-transient",
      capacityErrors: pick(3, 10) * 2,
      expect: "Succeeded",
      maxCallsPerRepair: 30
    })
  })

  it("RunInstances capacity errors that never end: the repair ends Failed after retry.maxAttempts", async () => {
    await run({
      name: "capacity-persistent",
      capacityErrors: 100_000,
      over: { retry: { maxAttempts: 3, initialBackoffSeconds: 0.5, maxBackoffSeconds: 2 } },
      expect: "Failed",
      maxCallsPerRepair: 30
    })
  })
})
