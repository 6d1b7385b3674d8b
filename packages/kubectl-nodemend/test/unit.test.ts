import type { ConfigMap, CoreEvent, Node } from "@nodemend/kube-access"
import { describe, expect, it } from "vitest"
import { parseDurationMs } from "../src/duration.ts"
import { serializeRecord, type RepairRecord } from "@nodemend/repair-controller"
import { journalName as controllerJournalName } from "../../repair-controller/src/controller/RepairStore.ts"
import { eventSource, isUnhealthy, nodeRows, poolStates, timeline } from "../src/fleet.ts"
import { journalName, journalOf, repairOf } from "../src/repairJournal.ts"
import {
  captureProgress,
  type NodeDiagnostic,
  nodeDiagnosticBody
} from "@nodemend/kube-access/NodeDiagnostic"
import { kubeletProxyBundlePath, PLUGIN_LABEL, urlForNode } from "../src/nodeDiagnostics.ts"
import { renderTable } from "../src/table.ts"

describe("kubelet proxy path", () => {
  it("points at the kubelet's /logs/ handler for the node's bundle", () => {
    expect(kubeletProxyBundlePath("ip-10-0-1-23.ec2.internal")).toBe(
      "/api/v1/nodes/ip-10-0-1-23.ec2.internal/proxy/logs/nodemend/ip-10-0-1-23.ec2.internal-logs.tar.gz"
    )
  })
  it("escapes what a node name cannot smuggle into the path", () => {
    expect(kubeletProxyBundlePath("a/../b")).toBe(
      "/api/v1/nodes/a%2F..%2Fb/proxy/logs/nodemend/a%2F..%2Fb-logs.tar.gz"
    )
  })
  it("fills {node} in URL templates", () => {
    expect(urlForNode("https://b.s3.amazonaws.com/{node}.tgz?sig=1", "n-1")).toBe(
      "https://b.s3.amazonaws.com/n-1.tgz?sig=1"
    )
  })
})

describe("captureProgress", () => {
  type State = NonNullable<NonNullable<NodeDiagnostic["status"]>["captureStatuses"]>[number]["state"]
  const nd = (generation: number, state?: State): NodeDiagnostic => ({
    metadata: { name: "n", generation },
    ...(state ? { status: { captureStatuses: [{ type: "Log", state }] } } : {})
  })
  it("follows pending -> running -> completed for the requested generation", () => {
    expect(captureProgress(nd(1))._tag).toBe("Pending")
    expect(captureProgress(nd(1, { running: { startedAt: "t" } }))._tag).toBe("Running")
    const completed = {
      reason: "Success",
      message: "m",
      startedAt: "t0",
      finishedAt: "t1",
      observedGeneration: 1
    } as const
    expect(captureProgress(nd(1, { completed }))).toEqual({ _tag: "Completed", completed })
    expect(captureProgress(nd(2, { completed }))._tag).toBe("Pending")
  })
  it("builds the request body, labelled as the plugin's", () => {
    const body = nodeDiagnosticBody(
      "n",
      { destination: "node", categories: ["All"] },
      { labels: PLUGIN_LABEL }
    )
    expect(body).toEqual({
      apiVersion: "nodemend.io/v1alpha1",
      kind: "NodeDiagnostic",
      metadata: { name: "n", labels: { "app.kubernetes.io/managed-by": "kubectl-nodemend" } },
      spec: { logCapture: { destination: "node", categories: ["All"] } }
    })
  })
})

describe("parseDurationMs", () => {
  it.each([
    ["300", 300_000],
    ["300s", 300_000],
    ["5m", 300_000],
    ["1m30s", 90_000],
    ["500ms", 500],
    ["1h", 3_600_000]
  ])("%s", (t, ms) => expect(parseDurationMs(t)).toBe(ms))
  it("rejects garbage", () => {
    expect(parseDurationMs("5 minutes")).toBeUndefined()
    expect(parseDurationMs("")).toBeUndefined()
  })
})

const node = (name: string, pool: string, conds: Array<[string, string, string?]>): Node => ({
  metadata: {
    name,
    uid: `uid-${name}`,
    labels: { "karpenter.sh/nodepool": pool, "topology.kubernetes.io/zone": "us-west-2a" }
  },
  status: {
    conditions: conds.map(([type, status, reason], i) => ({
      type,
      status,
      ...(reason ? { reason } : {}),
      lastTransitionTime: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString()
    }))
  }
})

/** A journal ConfigMap as the repair controller writes it, for `n` (its uid unless `uid` says otherwise). */
const journalEntry = (
  n: Node,
  fields: Partial<RepairRecord> = {},
  uid = n.metadata?.uid ?? ""
): ConfigMap => {
  const name = n.metadata?.name ?? ""
  const record: RepairRecord = {
    v: 3,
    id: `r-${name}`,
    phase: "Draining",
    action: "Replace",
    conditionType: "AcceleratedHardwareReady",
    conditionStatus: "False",
    reason: "NvidiaXID79Error",
    startedAt: "2026-01-01T00:10:00Z",
    order: "removeFirst",
    drainMode: "wait",
    drainDeadlineMs: 600_000,
    captureLogs: false,
    node: {
      name,
      uid,
      providerID: `aws:///us-west-2a/i-${name}`,
      labels: {},
      instance: { instanceId: `i-${name}`, state: "running", launch: {}, owner: { kind: "standalone" } }
    },
    ...fields
  }
  return {
    metadata: { name: `nodemend-repair-${name}`, labels: { "nodemend.io/repair-journal": "true" } },
    data: { record: serializeRecord(record) }
  }
}

/** An event as the repair controller writes it, read through core/v1; `from` overrides who wrote it. */
const event = (
  nodeName: string,
  reason: string,
  message: string,
  at: string,
  from: Partial<CoreEvent> = {}
): CoreEvent => ({
  metadata: { name: `${nodeName}.${reason}`, namespace: "default" },
  involvedObject: { kind: "Node", name: nodeName },
  reason,
  message,
  type: "Warning",
  lastTimestamp: new Date(at).toISOString(),
  reportingComponent: "nodemend.io/repair-controller",
  ...from
})

describe("fleet", () => {
  const healthy = node("a", "gpu", [
    ["Ready", "True"],
    ["KernelReady", "True"]
  ])
  const broken = node("b", "gpu", [
    ["Ready", "True"],
    ["AcceleratedHardwareReady", "False", "NvidiaXID79Error"]
  ])
  const other = node("c", "cpu", [["Ready", "False", "KubeletNotReady"]])
  const journal = journalOf([journalEntry(broken)])

  it("renders one row per node with our conditions and the repair phase from the journal", () => {
    const rows = nodeRows([broken, healthy], ["karpenter.sh/nodepool"], journal)
    expect(rows[0]).toEqual(["a", "gpu", "us-west-2a", "True", "True", "-", "-", "-", "-", "-"])
    expect(rows[1]?.[8]).toBe("False:NvidiaXID79Error")
    expect(rows[1]?.[9]).toBe("Draining/Replace")
    expect(repairOf(node("x", "p", []), journal)).toBeUndefined()
    expect(isUnhealthy(other, journal)).toBe(true)
  })

  it("reads repairs from the controller's journal only, for the Node object the record is bound to", () => {
    // The old Node annotation is not a record any more: a node can write its own annotations.
    const annotated: Node = {
      ...healthy,
      metadata: {
        ...healthy.metadata,
        annotations: { "nodemend.io/repair": JSON.stringify({ phase: "Draining", action: "Replace" }) }
      }
    }
    expect(nodeRows([annotated], ["karpenter.sh/nodepool"], journal)[0]?.[9]).toBe("-")
    // A record for an earlier Node of the same name, one filed under another node's name, one unreadable.
    const earlier = journalOf([journalEntry(healthy, {}, "uid-of-an-earlier-a")])
    expect(repairOf(healthy, earlier)).toBeUndefined()
    const misfiled = { ...journalEntry(broken), metadata: { name: "nodemend-repair-a" } }
    expect(repairOf(healthy, journalOf([misfiled]))).toBeUndefined()
    const unreadable = { metadata: { name: "nodemend-repair-a" }, data: { record: "{" } }
    expect(repairOf(healthy, journalOf([unreadable]))).toEqual({ phase: "Unreadable" })
  })

  it("names the journal as the repair controller does", () => {
    expect(journalName("ip-10-0-1-23.ec2.internal")).toBe(controllerJournalName("ip-10-0-1-23.ec2.internal"))
  })

  it("derives breaker and stand-down per pool from recent controller events", () => {
    const now = Date.parse("2026-01-01T01:00:00Z")
    const events = [
      event(
        "b",
        "RepairBlocked",
        "more than 10% of nodes are unhealthy in nodepool gpu",
        "2026-01-01T00:58:00Z"
      ),
      event("c", "RepairStandDown", "stands down: zonal shift in us-west-2a", "2026-01-01T00:30:00Z")
    ]
    const pools = poolStates([healthy, broken, other], events, journal, ["karpenter.sh/nodepool"], now)
    expect(pools.find((p) => p.pool === "gpu")).toMatchObject({
      nodes: 2,
      unhealthy: 1,
      repairing: 1,
      standDown: "no"
    })
    expect(pools.find((p) => p.pool === "gpu")?.breaker).toMatch(/^OPEN: more than 10%/)
    // 30 minutes old: outside the window, no longer current.
    expect(pools.find((p) => p.pool === "cpu")).toMatchObject({ breaker: "closed", standDown: "no" })
  })

  it("takes breaker and stand-down only from the controller's own events", () => {
    const now = Date.parse("2026-01-01T01:00:00Z")
    const at = "2026-01-01T00:58:00Z"
    const forged = [
      // The agent's identity (or anyone's) writing the controller's reasons.
      event("b", "RepairBlocked", "forged", at, { reportingComponent: "nodemend.io/agent" }),
      event("b", "RepairStandDown", "forged", at, { reportingComponent: "" }),
      // core/v1's legacy source, which the controller never sets.
      event("b", "RepairBlocked", "forged", at, {
        reportingComponent: "",
        source: { component: "nodemend.io/repair-controller" }
      }),
      // The controller's name, but from a namespace it does not write in.
      event("b", "RepairStandDown", "forged", at, {
        metadata: { name: "x", namespace: "tenant-a" }
      })
    ]
    const pools = poolStates([healthy, broken], forged, journal, ["karpenter.sh/nodepool"], now)
    expect(pools.find((p) => p.pool === "gpu")).toMatchObject({ breaker: "closed", standDown: "no" })
    const real = poolStates(
      [healthy, broken],
      [...forged, event("b", "RepairStandDown", "zonal shift", at)],
      journal,
      ["karpenter.sh/nodepool"],
      now
    )
    expect(real.find((p) => p.pool === "gpu")).toMatchObject({
      breaker: "closed",
      standDown: "YES: zonal shift"
    })
  })

  it("timeline: an event naming the controller without being its own says so", () => {
    const t = timeline(
      node("n", "p", []),
      [
        event("n", "RepairBlocked", "real", "2026-01-01T00:01:00Z", {
          reportingInstance: "ctrl-0"
        } as Partial<CoreEvent>),
        event("n", "RepairBlocked", "forged", "2026-01-01T00:02:00Z", {
          reportingComponent: "",
          source: { component: "nodemend.io/repair-controller" }
        }),
        event("n", "NvidiaXID79Error", "from the agent", "2026-01-01T00:03:00Z", {
          reportingComponent: "nodemend.io/agent",
          source: { host: "n" }
        })
      ],
      undefined
    )
    expect(t.map((e) => [e.from, e.text])).toEqual([
      ["verified: nodemend.io/repair-controller/ctrl-0", "Warning RepairBlocked: real"],
      [
        "unverified: nodemend.io/repair-controller (legacy source.component only)",
        "Warning RepairBlocked: forged"
      ],
      ["unverified: nodemend.io/agent/n", "Warning NvidiaXID79Error: from the agent"]
    ])
  })

  // Issue 24: a node posted the controller's name followed by a zero-width space, and it showed as the controller's.
  it("timeline: the controller's name with invisible or look-alike characters is unverified, printed plainly", () => {
    const at = "2026-01-01T00:01:00Z"
    const forgeries: Array<Partial<CoreEvent>> = [
      { reportingComponent: "", source: { component: "nodemend.io/repair-controller\u200b" } },
      { reportingComponent: "nodemend.io/repair-controller\u200b" },
      { reportingComponent: "\ufeffnodemend.io/repair-\u2060controller" },
      { reportingComponent: "nodemend.io/repair-controller\u202e\u2066" },
      { reportingComponent: "nodemend.io/repair-controller\u{E0020}" },
      // Fullwidth letters (NFKC folds them) and a Unicode hyphen.
      { reportingComponent: "\uff4eodemend.io/repair\u2010controller" }
    ]
    for (const from of forgeries) {
      const [entry] = timeline(
        node("n", "p", []),
        [event("n", "RepairBlocked", "forged", at, from)],
        undefined
      )
      expect(entry?.from).toBe(
        "unverified: nodemend.io/repair-controller (hidden or look-alike characters in its name)"
      )
      expect(eventSource(event("n", "RepairBlocked", "forged", at, from)).verified).toBe(false)
      // Nothing invisible reaches the screen.
      expect(renderTable(["FROM"], [[entry?.from ?? ""]])).not.toMatch(
        /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u
      )
    }
    // And the breaker is not taken from any of them.
    const pools = poolStates(
      [node("n", "p", [])],
      forgeries.map((f) => event("n", "RepairBlocked", "forged", at, f)),
      journalOf([]),
      ["karpenter.sh/nodepool"],
      Date.parse("2026-01-01T00:02:00Z")
    )
    expect(pools[0]?.breaker).toBe("closed")
    // Other look-alikes are not folded but flagged: a Cyrillic o.
    expect(
      eventSource(event("n", "X", "m", at, { reportingComponent: "n\u043edemend.io/repair-controller" }))
        .warning
    ).toBe("non-ASCII characters in its name")
    // The controller's exact name from another namespace, and in other case.
    expect(
      eventSource(event("n", "X", "m", at, { metadata: { name: "x", namespace: "tenant-a" } })).warning
    ).toBe("written in namespace tenant-a")
    expect(
      eventSource(event("n", "X", "m", at, { reportingComponent: "Nodemend.io/Repair-Controller" })).warning
    ).toBe("not the controller's exact name")
    // The reason and type are printed without their invisible characters too.
    const [e] = timeline(
      node("n", "p", []),
      [event("n", "Repair\u200bBlocked", "m", at, { type: "Warn\u200bing" })],
      undefined
    )
    expect(e?.text).toBe("Warning RepairBlocked: m")
  })

  it("orders a node's conditions, events and repair in time", () => {
    const events = [event("b", "RepairStarted", "replacing", "2026-01-01T00:10:30Z")]
    const t = timeline(broken, events, repairOf(broken, journal))
    expect(t.map((e) => e.kind)).toEqual(["Condition", "Condition", "Repair", "Event"])
    expect(t[1]?.text).toContain("AcceleratedHardwareReady=False NvidiaXID79Error")
  })

  it("renders aligned tables", () => {
    expect(renderTable(["A", "BB"], [["xxx", "y"]])).toBe("A     BB\nxxx   y")
  })
})
