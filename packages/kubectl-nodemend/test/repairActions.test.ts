import type { ConfigMap, Node } from "@nodemend/kube-access"
import { type RepairRecord, serializeRecord } from "@nodemend/repair-controller"
import { DO_NOT_REPAIR_ANNOTATION } from "@nodemend/reason-codes"
import { describe, expect, it } from "vitest"
import { heldPoolRows, heldPools } from "../src/fleet.ts"
import {
  actionNote,
  describePermission,
  missingPermissionsMessage,
  namespaceFlag,
  permissionsFor,
  planRepairAction,
  selfSubjectAccessReview
} from "../src/repairActions.ts"
import { journalOf } from "../src/repairJournal.ts"

const NS = "nodemend-system"

const node = (name: string, uid = `uid-${name}`, annotations: Record<string, string> = {}): Node => ({
  metadata: { name, uid, labels: { "karpenter.sh/nodepool": "gpu" }, annotations },
  spec: { taints: [{ key: "nodemend.io/repair", effect: "NoSchedule" }] }
})

const record = (name: string, fields: Partial<RepairRecord> = {}): RepairRecord => ({
  v: 3,
  id: `r-${name}`,
  phase: "Failed",
  action: "Replace",
  conditionType: "AcceleratedHardwareReady",
  conditionStatus: "False",
  reason: "NvidiaXID79Error",
  startedAt: "2026-01-01T00:10:00Z",
  finishedAt: "2026-01-01T00:30:00Z",
  failure: "replacement did not become Ready in time",
  order: "removeFirst",
  drainMode: "wait",
  drainDeadlineMs: 600_000,
  captureLogs: false,
  node: {
    name,
    uid: `uid-${name}`,
    providerID: `aws:///us-west-2a/i-${name}`,
    pool: "gpu",
    labels: {},
    instance: { instanceId: `i-${name}`, state: "running", launch: {}, owner: { kind: "standalone" } }
  },
  ...fields
})

const configMap = (
  r: RepairRecord | string,
  name = `nodemend-repair-${typeof r === "string" ? "b" : r.node.name}`
): ConfigMap => ({
  metadata: { name, namespace: NS, uid: "cm-uid", resourceVersion: "42" },
  data: { record: typeof r === "string" ? r : serializeRecord(r) }
})

describe("retry and abandon: what they need", () => {
  it("checks every permission it uses, abandon also the Node patch", () => {
    expect(permissionsFor("retry", "b", NS).map(describePermission)).toEqual([
      "get configmaps/nodemend-repair-b in namespace nodemend-system",
      "get nodes/b",
      "delete configmaps/nodemend-repair-b in namespace nodemend-system",
      "create events.events.k8s.io in namespace default"
    ])
    expect(permissionsFor("abandon", "b", NS).map(describePermission)).toContain("patch nodes/b")
    expect(selfSubjectAccessReview(permissionsFor("retry", "b", NS)[2]!)).toEqual({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: {
        resourceAttributes: {
          verb: "delete",
          group: "",
          resource: "configmaps",
          namespace: NS,
          name: "nodemend-repair-b"
        }
      }
    })
  })

  it("names each missing permission and says nothing changed", () => {
    const [, , del, ev] = permissionsFor("retry", "b", NS)
    expect(
      missingPermissionsMessage("retry", "alice", [
        { permission: del! },
        { permission: ev!, reason: "no RBAC policy matched" }
      ])
    ).toBe(
      "alice may not retry a repair: missing permissions delete configmaps/nodemend-repair-b in namespace nodemend-system; create events.events.k8s.io in namespace default (no RBAC policy matched). Nothing was changed."
    )
  })
})

describe("retry and abandon: the plan", () => {
  it("acts on a Failed record, deleting it only as read (uid, resourceVersion)", () => {
    const plan = planRepairAction("retry", "b", NS, configMap(record("b")), node("b"))
    expect(plan).toMatchObject({
      _tag: "Act",
      configMap: { name: "nodemend-repair-b", uid: "cm-uid", resourceVersion: "42" },
      sameNode: true,
      annotate: false
    })
    expect(planRepairAction("abandon", "b", NS, configMap(record("b")), node("b"))).toMatchObject({
      _tag: "Act",
      annotate: true
    })
    // Already vetoed: nothing to annotate.
    expect(
      planRepairAction(
        "abandon",
        "b",
        NS,
        configMap(record("b")),
        node("b", "uid-b", { [DO_NOT_REPAIR_ANNOTATION]: "true" })
      )
    ).toMatchObject({ _tag: "Act", annotate: false, sameNode: true })
  })

  it("never annotates another Node of the same name, nor a missing one", () => {
    for (const n of [node("b", "uid-of-a-new-b"), undefined])
      expect(planRepairAction("abandon", "b", NS, configMap(record("b")), n)).toMatchObject({
        _tag: "Act",
        sameNode: false,
        annotate: false
      })
  })

  it("refuses a repair in flight, naming its phase, and one that succeeded", () => {
    for (const phase of ["Tainting", "Draining", "Replacing", "Untainting"] as const) {
      const plan = planRepairAction("abandon", "b", NS, configMap(record("b", { phase })), node("b"))
      expect(plan._tag).toBe("Refuse")
      expect(plan._tag === "Refuse" && plan.message).toBe(
        `the repair of b (r-b) is in flight, in phase ${phase}: abandon acts only on a Failed repair, and the controller is still working on this one`
      )
    }
    const done = planRepairAction("retry", "b", NS, configMap(record("b", { phase: "Succeeded" })), node("b"))
    expect(done._tag === "Refuse" && done.message).toContain("ended Succeeded, not Failed")
  })

  it("refuses no record, an unreadable one, one filed under another node, one without a resourceVersion", () => {
    const none = planRepairAction("retry", "b", NS, undefined, node("b"))
    expect(none._tag === "Refuse" && none.message).toBe(
      "no repair of b is recorded in the journal (ConfigMap nodemend-system/nodemend-repair-b not found): nothing to retry"
    )
    const unreadable = planRepairAction("retry", "b", NS, configMap("{"), node("b"))
    expect(unreadable._tag === "Refuse" && unreadable.message).toContain(
      "is not a repair record the controller can read"
    )
    const misfiled = planRepairAction(
      "retry",
      "b",
      NS,
      configMap(record("a"), "nodemend-repair-b"),
      node("b")
    )
    expect(misfiled._tag === "Refuse" && misfiled.message).toContain("records a repair of a, not b")
    const blind = configMap(record("b"))
    const noVersion = planRepairAction(
      "retry",
      "b",
      NS,
      { ...blind, metadata: { name: "nodemend-repair-b" } },
      node("b")
    )
    expect(noVersion._tag).toBe("Refuse")
  })

  it("writes a note naming the user, the failed repair and what happens next", () => {
    expect(actionNote("retry", record("b"), "alice")).toBe(
      "alice asked for a new repair after failed repair r-b (NvidiaXID79Error; replacement did not become Ready in time) with kubectl nodemend retry: its journal record was deleted and the node keeps its taint; the controller repairs it again if it is still unhealthy"
    )
    expect(actionNote("abandon", record("b"), undefined)).toMatch(
      /^an unidentified user abandoned failed repair r-b .* annotated nodemend.io\/do-not-repair=true/
    )
    expect(actionNote("retry", record("b", { failure: "x".repeat(2000) }), "alice").length).toBe(1024)
  })

  it("suggests commands with the controller namespace only when it is not the default", () => {
    expect(namespaceFlag(NS)).toBe("")
    expect(namespaceFlag("ops")).toBe(" --controller-namespace ops")
  })
})

describe("status: pools held by a failed repair", () => {
  it("lists every Failed record with its pool, node, time and failure; not the repairs in flight", () => {
    const journal = journalOf([
      configMap(record("b")),
      configMap(record("c", { node: { ...record("c").node, pool: undefined as never } })),
      configMap(record("d", { phase: "Draining" })),
      configMap(record("gone", { finishedAt: "2026-01-01T00:20:00Z" }))
    ])
    const c = { ...node("c"), metadata: { ...node("c").metadata, labels: { "nodemend.io/pool": "cpu" } } }
    const held = heldPools([node("b"), c, node("d")], journal, ["karpenter.sh/nodepool", "nodemend.io/pool"])
    expect(held.map((h) => [h.pool, h.node, h.since, h.nodePresent])).toEqual([
      ["cpu", "c", "2026-01-01T00:30:00Z", true],
      ["gpu", "b", "2026-01-01T00:30:00Z", true],
      ["gpu", "gone", "2026-01-01T00:20:00Z", false]
    ])
    expect(heldPoolRows(held)[2]).toEqual([
      "gpu",
      "gone (gone)",
      "2026-01-01T00:20:00Z",
      "r-gone",
      "replacement did not become Ready in time"
    ])
    expect(heldPools([node("d")], journalOf([configMap(record("d", { phase: "Draining" }))]), [])).toEqual([])
  })
})
