// kubectl nodemend record + whatif against a live run (issues #28, #40): the recorder watches a pool of kwok Nodes
// while the real repair controller (a child process, kwok provider) repairs them under an in-flight budget of 2;
// the recording replayed under the same config (the controller itself, in memory, on a simulated clock) makes the
// same decisions. Once for a fixed story, once for a generated history (seeded: WHATIF_SEED runs another).
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { clients, createTestNamespace, deleteNamespace, deleteRunNodes } from "@nodemend/cluster-harness"
import { decodeConfig } from "@nodemend/repair-controller"
import { parseHistory, replay } from "@nodemend/repair-controller/whatif"
import { Effect, Result } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  type ControllerProcess,
  killControllers,
  startControllerProcess
} from "../../../repair-controller/test/integration/controllerProcess.ts"
import {
  createPool,
  eventTime,
  IT_LABEL,
  nodeEvents,
  POOL_LABEL,
  scenario,
  setKernelReady,
  sleep,
  testConfig,
  waitForEvent
} from "../../../repair-controller/test/integration/helpers.ts"
import { connect } from "../../src/kubeClient.ts"
import { recordCommand } from "../../src/record.ts"

const { core } = clients()
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
const running: ControllerProcess[] = []
const dir = mkdtempSync(join(tmpdir(), "whatif-live-"))
let ns = ""

beforeAll(async () => {
  ns = await createTestNamespace(core, "whatif")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
  rmSync(dir, { recursive: true, force: true })
})

/** `kubectl nodemend record` of the scenario's Nodes into `file`, until the function it returns is called. */
const record = (s: { readonly tag: string }, file: string) => {
  let finish = () => {}
  const finished = new Promise<void>((resolve) => {
    finish = resolve
  })
  const recording = recordCommand(
    connect(kubeconfig),
    {
      out: file,
      poolLabels: [POOL_LABEL],
      selector: `${IT_LABEL}=${s.tag}`,
      forMs: undefined,
      until: finished
    },
    { out: () => {}, err: () => {} }
  )
  return async () => {
    finish()
    await recording
  }
}

/**
 * A pool of `size` kwok Nodes recorded into a file, and the real controller started on it (in-flight budget 2,
 * the breaker at `percent`).
 */
const liveRun = async (prefix: string, size: number, percent: number) => {
  const s = scenario(prefix)
  const nodes = (await createPool(core, s, size)).map((n) => n.metadata?.name ?? "")
  const config = testConfig(ns, s, {
    maxUnhealthyPercent: percent,
    maxInFlight: "2",
    kwok: { replacementDelaySeconds: 1, zonalShiftConfigMap: `shifts-${s.tag}` }
  })
  const file = join(dir, `${s.tag}.jsonl`)
  const stopRecording = record(s, file)
  await sleep(1500)
  running.push(await startControllerProcess(kubeconfig, config))
  return { s, nodes, config, file, stopRecording }
}

/** mulberry32: a seeded generator, so a failing history can be run again (WHATIF_SEED). */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
}

/**
 * A generated history: waves 25 s apart; in each, 1 to 3 nodes fail at once (more than the in-flight budget of 2
 * can take: one waits) and 0 or 1 other node flaps (False, True again 1 s later, inside its 3 s toleration).
 */
const generate = (random: () => number, nodes: ReadonlyArray<string>, waves: number) => {
  const free = [...nodes]
  const take = () => free.splice(Math.floor(random() * free.length), 1)[0]!
  const steps: Array<{ readonly at: number; readonly node: string; readonly status: "True" | "False" }> = []
  const failing: string[][] = []
  const flapping: string[] = []
  for (let w = 0; w < waves; w++) {
    const at = w * 25_000
    const fail = Array.from({ length: 1 + Math.floor(random() * 3) }, take)
    failing.push(fail)
    for (const node of fail) steps.push({ at, node, status: "False" })
    if (random() < 0.6) {
      const node = take()
      flapping.push(node)
      steps.push({ at: at + 300, node, status: "False" }, { at: at + 1300, node, status: "True" })
    }
  }
  return { steps: steps.sort((a, b) => a.at - b.at), failing, flapping }
}

describe("kubectl nodemend whatif against a live run", () => {
  it("replays a recording under the controller's config: the same repairs, at the same times, the same queue", async () => {
    const { s, nodes, config, file, stopRecording } = await liveRun("whatif", 10, 40)
    const bad = nodes.slice(0, 4)
    await Promise.all(bad.map((n) => setKernelReady(core, n, "False")))
    await Promise.all(bad.map((n) => waitForEvent(core, n, "RepairSucceeded", 150_000)))
    await sleep(1500)
    await stopRecording()

    const live = await Promise.all(
      bad.map(async (n) => ({
        node: n,
        started: eventTime((await nodeEvents(core, n, "RepairStarted"))[0]!),
        queued: (await nodeEvents(core, n, "RepairQueued")).length > 0
      }))
    )
    const parsed = parseHistory(readFileSync(file, "utf8"))
    expect(parsed.bad).toEqual([])
    expect(
      parsed.events
        .filter((e) => e.kind === "deleted")
        .map((e) => (e as { node: string }).node)
        .sort()
    ).toEqual([...bad].sort())
    const r = await Effect.runPromise(replay(Result.getOrThrow(decodeConfig(config)), parsed.events))

    // The repairs the controller made, and no other. Which two of the four go first is the workers' race in the
    // controller and the recording's order in the replay; when they differ, a node the replay still holds for the
    // budget is deleted by the controller's repair (outcome "deleted"): repaired in both, started only in one.
    const repairedFirstLive = (h: (typeof r.holds)[number]) => h.cause === "budget" && h.outcome === "deleted"
    expect(
      [...r.repairs.map((x) => x.node), ...r.holds.filter(repairedFirstLive).map((h) => h.node)].sort()
    ).toEqual([...bad].sort())
    expect(r.repairs.every((x) => x.pool === s.pool && x.reason === "ForkFailedOutOfPIDs")).toBe(true)
    // When: the n-th repair the replay starts within 15 s of the n-th the controller started. The replay starts a
    // repair at the instant it falls due; the controller later by its own latency, which reached 11 s once in CI
    // with five test streams on two cores (the demo scenario's what-if story uses 15 s too).
    const liveStarts = live.map((l) => l.started).sort((a, b) => a - b)
    const replayStarts = r.repairs.map((x) => x.startedAt).sort((a, b) => a - b)
    replayStarts.forEach((t, i) => {
      expect(Math.abs(t - liveStarts[i]!)).toBeLessThan(15_000)
    })
    // The queue: two waited for a slot in both.
    expect(live.filter((l) => l.queued)).toHaveLength(2)
    expect(r.holds.filter((h) => h.cause === "budget")).toHaveLength(2)
    expect(
      r.holds.filter((h) => h.cause === "budget" && h.outcome !== "started" && !repairedFirstLive(h))
    ).toEqual([])
  }, 240_000)

  it("a generated history: the live controller and the replay of its recording make the same decisions", async () => {
    const seed = Number(process.env.WHATIF_SEED ?? 20261206)
    const { nodes, config, file, stopRecording } = await liveRun("whatifgen", 14, 50)
    const history = generate(seeded(seed), nodes, 3)
    const t0 = Date.now()
    for (const step of history.steps) {
      await sleep(Math.max(0, t0 + step.at - Date.now()))
      await setKernelReady(core, step.node, step.status)
    }
    const failed = history.failing.flat()
    await Promise.all(failed.map((n) => waitForEvent(core, n, "RepairSucceeded", 150_000)))
    await sleep(1500)
    await stopRecording()

    const started = async (n: string) => (await nodeEvents(core, n, "RepairStarted")).length > 0
    const queued = async (n: string) => (await nodeEvents(core, n, "RepairQueued")).length > 0
    const liveRepaired = (await Promise.all(nodes.map(async (n) => ((await started(n)) ? [n] : [])))).flat()
    const liveQueued = (await Promise.all(nodes.map(async (n) => ((await queued(n)) ? [n] : [])))).flat()
    const parsed = parseHistory(readFileSync(file, "utf8"))
    expect(parsed.bad).toEqual([])
    // The replay's cloud boots a replacement as the live kwok provider did (1 s, then its agent's first report).
    const r = await Effect.runPromise(
      replay(Result.getOrThrow(decodeConfig(config)), parsed.events, { repairDurationMs: 1000 })
    )
    const holds = r.holds.map((h) => ({ node: h.node, cause: h.cause, outcome: h.outcome }))
    const context = `seed ${seed}: ${JSON.stringify(history)}; the replay's holds: ${JSON.stringify(holds)}`
    // Which two of a wave of three get the slots is the workers' race live and the recording's order in the replay
    // (as in the first test): a node the replay holds for the budget while the live controller repairs it first is
    // deleted in the recording (outcome "deleted"): repaired in both, started only live. Seen in CI under load.
    const repairedFirstLive = (h: (typeof r.holds)[number]) => h.cause === "budget" && h.outcome === "deleted"
    // The same nodes repaired: every one that failed and none that flapped, live and in the replay.
    expect(liveRepaired.sort(), context).toEqual([...failed].sort())
    expect(
      [...r.repairs.map((x) => x.node), ...r.holds.filter(repairedFirstLive).map((h) => h.node)].sort(),
      context
    ).toEqual([...failed].sort())
    expect(
      r.repairs.every((x) => x.reason === "ForkFailedOutOfPIDs" && !x.dryRun),
      context
    ).toBe(true)
    // The flaps: no repair, and the replay reports each as absorbed by its toleration.
    for (const n of history.flapping) {
      expect(liveRepaired, context).not.toContain(n)
      expect(
        r.flaps.filter((f) => f.node === n).map((f) => f.kind),
        context
      ).toEqual(["beforeToleration"])
    }
    // The budget: in a wave of 3, one waited for a slot, live and in the replay (which one is a race in both).
    const waves3 = history.failing.filter((w) => w.length === 3).length
    expect(liveQueued.length, context).toBe(waves3)
    expect(
      r.holds.filter((h) => h.cause === "budget" && (h.outcome === "started" || repairedFirstLive(h))).length,
      context
    ).toBe(waves3)
    // When: each wave's repairs start within 15 s of the live ones (the live controller's own latency on a shared
    // machine; the replay starts at the instant a toleration runs out), the n-th of a wave with the n-th.
    const liveStart = async (n: string) => eventTime((await nodeEvents(core, n, "RepairStarted"))[0]!)
    for (const wave of history.failing) {
      const liveStarts = (await Promise.all(wave.map(liveStart))).sort((a, b) => a - b)
      const replayStarts = r.repairs
        .filter((x) => wave.includes(x.node))
        .map((x) => x.startedAt)
        .sort((a, b) => a - b)
      replayStarts.forEach((t, i) => {
        expect(Math.abs(t - liveStarts[i]!), context).toBeLessThan(15_000)
      })
    }
  }, 300_000)
})
