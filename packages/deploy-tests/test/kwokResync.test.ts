// tools/cluster/kwokResync.mjs's pure part: which Pods kwok (v0.8.0) has provably dropped. A Pod is resynced only
// when kwok renewed its Node's Lease after the Pod was created (kwok then holds that Lease in its cache, so a new
// event of the Pod is played); a Pod kwok may still play when its watches catch up is left alone.
import type { V1Lease, V1Node, V1Pod } from "@kubernetes/client-node"
import { describe, expect, it } from "vitest"
import { droppedPods } from "../../../tools/cluster/kwokResync.mjs"

const T0 = Date.parse("2026-12-06T14:00:00Z")
const at = (s: number) => new Date(T0 + s * 1000).toISOString()
const node = (name: string, kwok = true): V1Node => ({
  metadata: { name, labels: kwok ? { "kwok.x-k8s.io/node": "fake" } : {} }
})
/** A Lease kwok created at `created` s and last renewed at `renewed` s. */
const lease = (name: string, created: number, renewed: number, holder = "kwok-1"): V1Lease => ({
  metadata: { name, namespace: "kube-node-lease", creationTimestamp: at(created) as unknown as Date },
  spec: { holderIdentity: holder, leaseDurationSeconds: 40, renewTime: at(renewed) as unknown as Date }
})
const pod = (name: string, nodeName: string, created: number, extra: Partial<V1Pod> = {}): V1Pod => ({
  metadata: { name, namespace: "t", creationTimestamp: at(created) as unknown as Date, ...extra.metadata },
  spec: { nodeName, containers: [{ name: "c" }] },
  status: { phase: "Pending", ...extra.status }
})
const names = (ps: V1Pod[]) => ps.map((p) => p.metadata?.name)

describe("droppedPods", () => {
  const nodes = [node("n1"), node("other", false)]
  const now = T0 + 30_000

  it("a Pending Pod whose Node's Lease kwok renewed after the Pod was created is dropped", () => {
    expect(names(droppedPods([pod("p", "n1", 0)], nodes, [lease("n1", 0, 10)], now))).toEqual(["p"])
  })

  it("a Lease only created (never renewed) proves nothing: kwok's cache may not hold it yet", () => {
    expect(droppedPods([pod("p", "n1", 0)], nodes, [lease("n1", 0, 0.5)], now)).toEqual([])
  })

  it("a renewal before the Pod was created (or within its creationTimestamp's second) proves nothing", () => {
    expect(droppedPods([pod("p", "n1", 20)], nodes, [lease("n1", 0, 20.5)], now)).toEqual([])
  })

  it("a Pod younger than minAgeMs is left alone", () => {
    expect(droppedPods([pod("p", "n1", 0)], nodes, [lease("n1", 0, 10)], T0 + 3_000)).toEqual([])
  })

  it("Running, deleting, unmanaged-node, Lease-less and holder-less Pods are left alone", () => {
    const pods = [
      pod("running", "n1", 0, { status: { phase: "Running" } }),
      pod("deleting", "n1", 0, { metadata: { deletionTimestamp: at(5) as unknown as Date } }),
      pod("unmanaged", "other", 0),
      pod("holderless", "n2", 0),
      pod("leaseless", "n3", 0)
    ]
    const leases = [lease("n1", 0, 10), lease("other", 0, 10), { ...lease("n2", 0, 10), spec: {} }]
    expect(droppedPods(pods, [...nodes, node("n2"), node("n3")], leases, now)).toEqual([])
  })
})
