// The fleet inventory (owner/Inventory.ts) and where healthy nodes count by it (PoolCounter): a pool's and a zone's
// size come from the cloud's placement of the machine a Node's name is bound to, never from the node's labels.
import { Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import type { Location, NodeRef } from "../src/cloud/CloudProvider.ts"
import { CloudError } from "../src/cloud/CloudProvider.ts"
import { makePoolCounter } from "../src/controller/PoolCounter.ts"
import { decide } from "../src/decide/decide.ts"
import type { NodeView } from "../src/domain/NodeView.ts"
import { makeInventory } from "../src/owner/Inventory.ts"
import { decodeConfig } from "../src/config/ConfigFile.ts"

const ZONE = "topology.kubernetes.io/zone"
const config = Result.getOrThrow(
  decodeConfig({ policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 60 }] })
)
const node = (name: string, pool: string, zone: string, uid = `${name}-uid`): NodeView => ({
  name,
  uid,
  providerID: `aws:///us-west-2a/i-${name}`,
  labels: { [config.poolLabel]: pool, [ZONE]: zone },
  annotations: {},
  conditions: [{ type: "Ready", status: "True" }],
  deleting: false
})

/** A cloud that knows `truth` (name -> location) and records each call's names. */
const cloud = (truth: Map<string, Location>) => {
  const calls: string[][] = []
  let failing = false
  return {
    calls,
    fail: (on: boolean) => {
      failing = on
    },
    locate: (nodes: ReadonlyArray<NodeRef>) =>
      Effect.suspend(() => {
        calls.push(nodes.map((n) => n.name))
        if (failing)
          return Effect.fail(new CloudError({ operation: "locate", message: "down", retryable: true }))
        return Effect.succeed(
          new Map(nodes.flatMap((n) => (truth.has(n.name) ? [[n.name, truth.get(n.name)!] as const] : [])))
        )
      })
  }
}

const setup = (truth: Map<string, Location>, batchSize = 100) => {
  const c = cloud(truth)
  const settled: string[] = []
  let counter: ReturnType<typeof makePoolCounter> | undefined
  const inventory = makeInventory({
    locate: c.locate,
    settled: (name) => {
      settled.push(name)
      counter?.recount(name)
    },
    batchSize
  })
  counter = makePoolCounter(config, () => ({ _tag: "Pending" }), inventory.of)
  const put = (n: NodeView) => {
    inventory.ensure(n)
    counter!.upsert(n)
  }
  return { c, settled, inventory, counter, put, flush: () => Effect.runPromise(inventory.flush) }
}

describe("the fleet inventory", () => {
  it("counts a healthy node in the cloud's pool and zone, however it relabels itself", async () => {
    const s = setup(new Map([["n1", { pool: "gpu", zone: "us-west-2a" }]]))
    s.put(node("n1", "gpu", "us-west-2a"))
    // Not answered yet: in the cluster only, in no pool and no zone.
    expect(s.counter.stats().pools.size).toBe(0)
    expect(s.counter.stats().zones?.size).toBe(0)
    await s.flush()
    expect(s.counter.stats().pools.get("gpu")?.size).toBe(1)
    expect([...(s.counter.stats().zones?.keys() ?? [])]).toEqual(["us-west-2a"])
    // 1,000 relabels: no new pool or zone, no cloud call.
    for (let i = 0; i < 1000; i++) s.put(node("n1", `p${i}`, `us-west-2z${i}`))
    await s.flush()
    expect([...s.counter.stats().pools.keys()]).toEqual(["gpu"])
    expect([...(s.counter.stats().zones?.keys() ?? [])]).toEqual(["us-west-2a"])
    expect(s.c.calls).toEqual([["n1"]])
  })

  it("a name the cloud does not know counts in no pool and no zone (the phantom zone does not exist)", async () => {
    const s = setup(new Map([["real", { zone: "us-west-2a" }]]))
    s.put(node("real", "general", "us-west-2a"))
    s.put(node("phantom", "general", "us-west-2z"))
    await s.flush()
    expect(s.inventory.of(node("phantom", "general", "us-west-2z"))._tag).toBe("Unprovable")
    expect([...(s.counter.stats().zones?.keys() ?? [])]).toEqual(["us-west-2a"])
    expect(s.counter.stats().cluster.size).toBe(2)
  })

  it("asks in batches, keeps a failed batch queued, and asks a new Node under an old name again", async () => {
    const truth = new Map<string, Location>()
    for (let i = 0; i < 250; i++) truth.set(`n${i}`, { pool: "general", zone: "z" })
    const s = setup(truth, 100)
    for (let i = 0; i < 250; i++) s.put(node(`n${i}`, "general", "z"))
    s.c.fail(true)
    await expect(s.flush()).rejects.toThrow()
    expect(s.counter.stats().pools.size).toBe(0)
    s.c.fail(false)
    await s.flush()
    expect(s.c.calls.slice(1).map((c) => c.length)).toEqual([100, 100, 50])
    expect(s.counter.stats().pools.get("general")?.size).toBe(250)
    // The Node deleted and created again (another uid): its placement is asked again, not carried over.
    s.put(node("n0", "general", "z", "other-uid"))
    expect(s.inventory.of(node("n0", "general", "z", "other-uid"))._tag).toBe("Pending")
    expect(s.counter.stats().pools.get("general")?.size).toBe(249)
    await s.flush()
    expect(s.c.calls.at(-1)).toEqual(["n0"])
    expect(s.counter.stats().pools.get("general")?.size).toBe(250)
  })

  it("refresh asks every located Node again and moves those the cloud moved; an answer asks nothing more", async () => {
    const truth = new Map<string, Location>([
      ["n1", { pool: "a", zone: "z" }],
      ["n2", { pool: "a", zone: "z" }]
    ])
    const s = setup(truth)
    s.put(node("n1", "a", "z"))
    s.put(node("n2", "a", "z"))
    await s.flush()
    truth.set("n1", { pool: "b", zone: "z" })
    await s.flush()
    expect(s.c.calls).toEqual([["n1", "n2"]])
    expect(s.counter.stats().pools.get("a")?.size).toBe(2)
    s.inventory.refresh()
    await s.flush()
    expect(s.c.calls).toEqual([
      ["n1", "n2"],
      ["n1", "n2"]
    ])
    expect(s.counter.stats().pools.get("b")?.size).toBe(1)
    expect(s.counter.stats().pools.get("a")?.size).toBe(1)
    // Only the moved Node is counted again; the refresh is spent once answered.
    expect(s.settled).toEqual(["n1", "n2", "n1"])
    await s.flush()
    expect(s.c.calls).toHaveLength(2)
  })
})

describe("a due repair waits for the fleet inventory", () => {
  it("is Unsettled while nodes are unanswered (their pool may be short), decided once they are", async () => {
    const truth = new Map<string, Location>()
    for (let i = 0; i < 10; i++) truth.set(`n${i}`, { pool: "general", zone: "z" })
    const s = setup(truth)
    const broken: NodeView = {
      ...node("n0", "general", "z"),
      conditions: [
        { type: "KernelReady", status: "False", reason: "ForkFailedOutOfPIDs", lastTransitionTime: 0 }
      ]
    }
    for (let i = 1; i < 10; i++) s.put(node(`n${i}`, "general", "z"))
    s.put(broken)
    expect(s.inventory.pending()).toBe(10)
    const at = (unlocated: number) =>
      decide({
        config,
        node: broken,
        stats: s.counter.stats(),
        shifts: { _tag: "Known", shifts: [] },
        now: 3_600_000,
        placement: { _tag: "Proven", pool: "general", zone: "z" },
        unlocated
      })._tag
    expect(at(s.inventory.pending())).toBe("Unsettled")
    await s.flush()
    expect(s.inventory.pending()).toBe(0)
    expect(at(s.inventory.pending())).toBe("Repair")
    s.inventory.forget("n3")
    s.put(node("n3", "general", "z", "new-uid"))
    expect(s.inventory.pending()).toBe(1)
    s.inventory.forget("n3")
    expect(s.inventory.pending()).toBe(0)
  })
})
