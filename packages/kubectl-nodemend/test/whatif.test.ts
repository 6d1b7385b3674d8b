import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { KubeError, type KubeHttp, type Node } from "@nodemend/kube-access"
import { Effect } from "effect"
import { historyLine, parseHistory } from "@nodemend/repair-controller/whatif"
import { describe, expect, it } from "vitest"
import { run } from "../src/cli.ts"
import { makePoolRecorder, makeRecorder, recordCommand } from "../src/record.ts"

const T0 = Date.parse("2026-11-23T00:00:00Z")
const MIN = 60_000

const nodeObj = (
  name: string,
  conditions: ReadonlyArray<{ type: string; status: string; reason?: string; lastTransitionTime?: string }>,
  labels: Record<string, string> = { "karpenter.sh/nodepool": "gpu", "topology.kubernetes.io/zone": "a" },
  annotations: Record<string, string> = {}
): Node => ({ metadata: { name, labels, annotations }, status: { conditions: [...conditions] } })

describe("kubectl nodemend record (the recorder)", () => {
  const labels = ["karpenter.sh/nodepool", "nodemend.io/pool"]
  it("writes a node line and its recorded conditions when first seen, then only transitions", () => {
    const r = makeRecorder(labels)
    const first = r.observe(
      nodeObj("n1", [
        { type: "Ready", status: "True", reason: "KubeletReady", lastTransitionTime: "2026-11-20T00:00:00Z" },
        { type: "MemoryPressure", status: "False" },
        { type: "KernelReady", status: "True", reason: "KernelIsReady" }
      ]),
      T0
    )
    expect(first).toEqual([
      { v: 1, kind: "node", at: "2026-11-23T00:00:00Z", node: "n1", pool: "gpu", zone: "a" },
      {
        v: 1,
        kind: "condition",
        at: "2026-11-20T00:00:00Z",
        node: "n1",
        pool: "gpu",
        zone: "a",
        type: "Ready",
        status: "True",
        reason: "KubeletReady"
      },
      // No lastTransitionTime: when it was seen.
      expect.objectContaining({ type: "KernelReady", at: "2026-11-23T00:00:00Z" })
    ])
    // Heartbeats change nothing recorded.
    expect(
      r.observe(
        nodeObj("n1", [
          { type: "Ready", status: "True", reason: "KubeletReady" },
          { type: "KernelReady", status: "True", reason: "KernelIsReady" }
        ]),
        T0 + MIN
      )
    ).toEqual([])
    const down = r.observe(
      nodeObj("n1", [
        { type: "Ready", status: "True", reason: "KubeletReady" },
        {
          type: "KernelReady",
          status: "False",
          reason: "HardwareErrorFatal",
          lastTransitionTime: "2026-11-23T00:01:30Z"
        }
      ]),
      T0 + 2 * MIN
    )
    expect(down).toEqual([
      expect.objectContaining({
        kind: "condition",
        type: "KernelReady",
        status: "False",
        at: "2026-11-23T00:01:30Z"
      })
    ])
    // A new reason under the same status: at is when it was seen (the status's transition time does not move).
    const reason = r.observe(
      nodeObj("n1", [
        {
          type: "KernelReady",
          status: "False",
          reason: "SoftLockup",
          lastTransitionTime: "2026-11-23T00:01:30Z"
        }
      ]),
      T0 + 3 * MIN
    )
    expect(reason).toEqual([expect.objectContaining({ reason: "SoftLockup", at: "2026-11-23T00:03:00Z" })])
  })

  it("writes pool, zone and do-not-repair changes, deletions, and the nodes a relist no longer shows", () => {
    const r = makeRecorder(labels)
    r.observe(nodeObj("n1", []), T0)
    r.observe(nodeObj("n2", [], { "nodemend.io/pool": "batch" }), T0)
    expect(
      r.observe(nodeObj("n1", [], undefined, { "nodemend.io/do-not-repair": "true" }), T0 + MIN)
    ).toEqual([
      {
        v: 1,
        kind: "node",
        at: "2026-11-23T00:01:00Z",
        node: "n1",
        pool: "gpu",
        zone: "a",
        doNotRepair: true
      }
    ])
    expect(r.deleted("n1", T0 + 2 * MIN)).toEqual([
      { v: 1, kind: "deleted", at: "2026-11-23T00:02:00Z", node: "n1" }
    ])
    expect(r.deleted("n1", T0 + 2 * MIN)).toEqual([])
    expect(r.relisted(new Set(), T0 + 3 * MIN)).toEqual([
      { v: 1, kind: "deleted", at: "2026-11-23T00:03:00Z", node: "n2" }
    ])
  })

  it("writes lines the replay reads back", () => {
    const r = makeRecorder(labels)
    const lines = [
      ...r.observe(nodeObj("n1", [{ type: "Ready", status: "Unknown", reason: "NodeStatusUnknown" }]), T0),
      ...r.deleted("n1", T0 + MIN)
    ]
    const parsed = parseHistory(lines.map(historyLine).join("\n"))
    expect(parsed.bad).toEqual([])
    expect(parsed.events.map((e) => e.kind)).toEqual(["node", "condition", "deleted"])
  })
})

describe("kubectl nodemend record (Karpenter NodePools)", () => {
  it("writes a NodePool's facts when its NodeClaims, veto or budgets change, and when it goes", () => {
    const r = makePoolRecorder()
    const claim = (name: string, pool: string) => ({
      metadata: { name, labels: { "karpenter.sh/nodepool": pool } }
    })
    // Claims of a pool not seen yet are counted, and written with it.
    expect(r.nodeClaim(claim("c1", "gpu"), T0)).toEqual([])
    expect(
      r.nodePool(
        {
          metadata: { name: "gpu" },
          spec: { disruption: { budgets: [{ nodes: "10%", reasons: ["Drifted"] }] } }
        },
        T0
      )
    ).toEqual([
      {
        v: 1,
        kind: "nodepool",
        at: "2026-11-23T00:00:00Z",
        pool: "gpu",
        claims: 1,
        budgets: [{ nodes: "10%", reasons: ["Drifted"] }]
      }
    ])
    expect(r.nodeClaim(claim("c2", "gpu"), T0 + MIN)).toEqual([expect.objectContaining({ claims: 2 })])
    // The same claim seen again (a status update) changes nothing.
    expect(r.nodeClaim(claim("c2", "gpu"), T0 + MIN)).toEqual([])
    expect(r.nodeClaimDeleted("c1", T0 + 2 * MIN)).toEqual([expect.objectContaining({ claims: 1 })])
    expect(
      r.nodePool(
        { metadata: { name: "gpu", annotations: { "nodemend.io/do-not-repair": "true" } } },
        T0 + 3 * MIN
      )
    ).toEqual([
      { v: 1, kind: "nodepool", at: "2026-11-23T00:03:00Z", pool: "gpu", claims: 1, doNotRepair: true }
    ])
    expect(r.nodePoolDeleted("gpu", T0 + 4 * MIN)).toEqual([
      { v: 1, kind: "nodepool", at: "2026-11-23T00:04:00Z", pool: "gpu", claims: 0, deleted: true }
    ])
  })
})

describe("kubectl nodemend record (the command, over a scripted API server)", () => {
  const node = (name: string, status: string, reason: string) => ({
    metadata: { name, resourceVersion: "1", labels: { "karpenter.sh/nodepool": "gpu" } },
    status: {
      conditions: [{ type: "KernelReady", status, reason, lastTransitionTime: "2026-11-23T00:00:00Z" }]
    }
  })
  /** Lists per collection; each watch sends its events once, then stays open. */
  const fakeKube = (karpenter: boolean): KubeHttp => {
    const lists: Record<string, unknown[]> = {
      "/api/v1/nodes": [node("n1", "True", "KernelIsReady"), node("n2", "True", "KernelIsReady")],
      "/apis/karpenter.sh/v1/nodepools": [{ metadata: { name: "gpu", resourceVersion: "1" } }],
      "/apis/karpenter.sh/v1/nodeclaims": [
        { metadata: { name: "c1", resourceVersion: "1", labels: { "karpenter.sh/nodepool": "gpu" } } }
      ]
    }
    const watches: Record<string, unknown[]> = {
      "/api/v1/nodes": [
        { type: "MODIFIED", object: node("n1", "False", "HardwareErrorFatal") },
        { type: "DELETED", object: node("n2", "True", "KernelIsReady") }
      ]
    }
    const collection = (path: string) => new URL(path, "https://x").pathname
    return {
      server: "https://x",
      stream: () => Promise.reject(new Error("not scripted")),
      call: (_op, _method, path) =>
        Effect.suspend(() => {
          const items = lists[collection(path)]
          if (items === undefined || (!karpenter && path.includes("karpenter")))
            return Effect.fail(
              new KubeError({ operation: "list", code: 404, reason: "NotFound", message: "not found" })
            )
          return Effect.succeed({ metadata: { resourceVersion: "1" }, items })
        }),
      watch: (_op, path, onEvent) =>
        Effect.suspend(() => {
          for (const e of watches[collection(path)] ?? []) onEvent(e)
          watches[collection(path)] = []
          return Effect.never
        }),
      close: () => undefined
    }
  }
  const recordWith = async (karpenter: boolean) => {
    const file = join(mkdtempSync(join(tmpdir(), "record-")), "h.jsonl")
    const err: string[] = []
    const code = await recordCommand(
      fakeKube(karpenter),
      {
        out: file,
        poolLabels: ["karpenter.sh/nodepool"],
        selector: undefined,
        forMs: undefined,
        until: sleep(300)
      },
      { out: () => {}, err: (t) => err.push(t) }
    )
    return { code, err, parsed: parseHistory(readFileSync(file, "utf8")) }
  }
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

  it("writes the start, the listed nodes, the watched changes, the NodePool's facts and the end", async () => {
    const { code, parsed } = await recordWith(true)
    expect(code).toBe(0)
    expect(parsed.bad).toEqual([])
    const lines = [...parsed.events].sort((a, b) => a.line - b.line)
    expect(lines[0]).toMatchObject({ kind: "mark", mark: "start" })
    expect(lines.at(-1)).toMatchObject({ kind: "mark", mark: "end" })
    expect(
      lines.filter((e) => e.kind === "condition").map((e) => [e.node, "status" in e ? e.status : ""])
    ).toEqual([
      ["n1", "True"],
      ["n2", "True"],
      ["n1", "False"]
    ])
    expect(lines.filter((e) => e.kind === "deleted").map((e) => e.node)).toEqual(["n2"])
    expect(lines.filter((e) => e.kind === "nodepool").at(-1)).toMatchObject({ pool: "gpu", claims: 1 })
  })

  it("records Nodes only where Karpenter's CRDs cannot be read, and says so", async () => {
    const { parsed, err } = await recordWith(false)
    expect(parsed.events.some((e) => e.kind === "nodepool")).toBe(false)
    expect(parsed.events.some((e) => e.kind === "deleted")).toBe(true)
    expect(err).toContain("no Karpenter NodePools readable here: recording Nodes only")
  })
})

describe("kubectl nodemend whatif", () => {
  const dir = mkdtempSync(join(tmpdir(), "whatif-"))
  const at = (min: number) => new Date(T0 + min * MIN).toISOString()
  const lines = [
    { v: 1, kind: "mark", at: at(0), mark: "start" },
    ...Array.from({ length: 10 }, (_, i) => ({ v: 1, kind: "node", at: at(0), node: `n${i}`, pool: "gpu" })),
    {
      v: 1,
      kind: "condition",
      at: at(10),
      node: "n1",
      type: "Ready",
      status: "False",
      reason: "KubeletNotReady"
    },
    {
      v: 1,
      kind: "condition",
      at: at(20),
      node: "n2",
      type: "Ready",
      status: "False",
      reason: "KubeletNotReady"
    },
    {
      v: 1,
      kind: "condition",
      at: at(25),
      node: "n2",
      type: "Ready",
      status: "True",
      reason: "KubeletReady"
    },
    { v: 1, kind: "mark", at: at(120), mark: "end" }
  ].map((l) => JSON.stringify(l))
  const history = join(dir, "history.jsonl")
  writeFileSync(history, [...lines.slice(0, 3), '{"v":1,"kind":"condition"', ...lines.slice(3)].join("\n"))
  const config = join(dir, "a.yaml")
  writeFileSync(config, "maxInFlight: '1'\n")
  const other = join(dir, "b.yaml")
  writeFileSync(other, "paused: true\n")
  const cli = async (...argv: string[]) => {
    const out: string[] = []
    const err: string[] = []
    const code = await run(argv, { out: (t) => out.push(t), err: (t) => err.push(t) })
    return { code, out: out.join("\n"), err: err.join("\n") }
  }

  it("prints the repairs and flaps per pool and reason, and names a bad line without losing the rest", async () => {
    const r = await cli("whatif", "--config", config, history)
    expect(r.code).toBe(0)
    expect(r.err).toContain(`${history}:4: `)
    expect(r.err).toContain("1 of 16 lines")
    expect(r.out).toMatch(/gpu\s+KubeletNotReady\s+1\s+2026-11-23T00:40Z\s+2026-11-23T00:40Z\s+-\s+1\s+0\s+0/)
    expect(r.out).toMatch(/2026-11-23T00:40Z\s+gpu\s+KubeletNotReady\s+n1\s+Replace\s+0m/)
  })

  it("-o json for automation, --compare side by side", async () => {
    const j = JSON.parse((await cli("whatif", "--config", config, "-o", "json", history)).out)
    expect(j.skipped).toEqual([{ line: 4, error: expect.stringContaining("not JSON") }])
    expect(j.repairs).toEqual([expect.objectContaining({ node: "n1", startedAt: "2026-11-23T00:40:00Z" })])
    expect(j.flaps).toEqual([
      expect.objectContaining({ node: "n2", kind: "beforeToleration", durationSeconds: 300 })
    ])
    const c = JSON.parse(
      (await cli("whatif", "--config", config, "--compare", other, "-o", "json", history)).out
    )
    expect(c.compare).toEqual([
      expect.objectContaining({
        pool: "gpu",
        reason: "KubeletNotReady",
        repairsA: 1,
        repairsB: 0,
        heldB: { veto: 1 },
        onlyA: ["n1"]
      })
    ])
    const text = await cli("whatif", "--config", config, "--compare", other, history)
    expect(text.out).toMatch(/gpu\s+KubeletNotReady\s+1\s+0\s+-\s+veto 1\s+1\s+1\s+n1\s+-/)
  })

  it("refuses a bad config with the field, and prints the format's JSON Schema", async () => {
    const bad = join(dir, "bad.yaml")
    writeFileSync(bad, "maxUnhealthyPercent: lots\n")
    const r = await cli("whatif", "--config", bad, history)
    expect(r.code).toBe(1)
    expect(r.err).toContain("maxUnhealthyPercent")
    const s = await cli("whatif", "--print-schema")
    expect(JSON.parse(s.out).dialect).toBe("draft-2020-12")
    expect((await cli("whatif", history)).err).toContain("usage: kubectl nodemend whatif --config")
  })
})
