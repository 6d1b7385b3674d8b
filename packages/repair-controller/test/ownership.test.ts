// Ownership is proven, never read: a NodeClaim with the Node's providerID makes it Karpenter's only when Karpenter
// registered that Node to it and the cloud does not say otherwise (issue #24: a node borrowed an unregistered claim's
// providerID and got the claim deleted and its spec copied).
import { describe, expect, it } from "vitest"
import { ownershipVerdict } from "../src/owner/ownership.ts"
import type { InstanceFacts } from "../src/domain/Instance.ts"
import type { NodeClaim } from "../src/karpenter/NodeClaims.ts"
import { node } from "./fixtures.ts"

const impostor = node("node-e", [], { pool: "gpu", labels: { "topology.kubernetes.io/zone": "us-west-2a" } })

const claim = (over: { nodeName?: string; deleting?: boolean; zone?: string } = {}): NodeClaim => ({
  metadata: {
    name: "victim-claim",
    labels: { "karpenter.sh/nodepool": "gpu", "topology.kubernetes.io/zone": over.zone ?? "us-west-2a" },
    ...(over.deleting ? { deletionTimestamp: "2026-12-02T00:00:00Z" } : {})
  },
  spec: {},
  status: {
    providerID: "kwok://node-e",
    ...(over.nodeName !== undefined ? { nodeName: over.nodeName } : {})
  }
})

const proven = (
  owner: InstanceFacts["owner"] = { kind: "standalone" },
  zone = "us-west-2a"
): InstanceFacts => ({
  instanceId: "kwok://node-e",
  state: "running",
  zone,
  launch: {},
  owner
})

const verdict = (c: NodeClaim | undefined, facts = proven()) =>
  ownershipVerdict({ node: impostor, proven: facts, claim: c, karpenterPresent: true })

describe("ownershipVerdict", () => {
  it("a NodeClaim Karpenter has not registered a Node to is nobody's proof: refused", () => {
    const v = verdict(claim())
    expect(v).toMatchObject({ _tag: "Refused", cause: "identity" })
    expect(v._tag === "Refused" && v.why).toContain("registered no Node")
  })

  it("a NodeClaim registered to another Node: refused", () => {
    expect(verdict(claim({ nodeName: "node-real" }))).toMatchObject({ _tag: "Refused", cause: "identity" })
  })

  it("the claim registered to this Node, but the cloud says the instance is another claim's or a group's: refused", () => {
    const mine = claim({ nodeName: "node-e" })
    expect(verdict(mine, proven({ kind: "karpenter", nodeClaim: "other-claim" }))).toMatchObject({
      _tag: "Refused",
      cause: "identity"
    })
    expect(verdict(mine, proven({ kind: "autoScaling", group: "asg-1" }))).toMatchObject({
      _tag: "Refused",
      cause: "identity"
    })
    expect(verdict(mine, proven({ kind: "standalone" }, "us-west-2b"))).toMatchObject({
      _tag: "Refused",
      cause: "identity"
    })
  })

  it("the claim Karpenter registered to this Node, on the machine the cloud proved: Karpenter owns it", () => {
    const v = verdict(claim({ nodeName: "node-e" }), proven({ kind: "karpenter", nodeClaim: "victim-claim" }))
    expect(v).toEqual({
      _tag: "Owned",
      facts: {
        instanceId: "kwok://node-e",
        state: "running",
        zone: "us-west-2a",
        pool: "gpu",
        launch: {},
        owner: { kind: "karpenter", nodeClaim: "victim-claim", nodePool: "gpu" }
      }
    })
  })

  it("Karpenter already taking the registered node away: deferred to it", () => {
    expect(verdict(claim({ nodeName: "node-e", deleting: true }))._tag).toBe("OwnerActing")
  })

  it("no claim: the cloud's owner, or refused when the node or the cloud says Karpenter", () => {
    expect(verdict(undefined)).toEqual({ _tag: "Owned", facts: proven() })
    expect(verdict(undefined, proven({ kind: "karpenter", nodeClaim: "x" }))).toMatchObject({
      _tag: "Refused",
      cause: "unknown-owner"
    })
    const labelled = node("node-e", [], { labels: { "karpenter.sh/registered": "true" } })
    expect(
      ownershipVerdict({ node: labelled, proven: proven(), claim: undefined, karpenterPresent: true })
    ).toMatchObject({ _tag: "Refused", cause: "unknown-owner" })
    expect(verdict(undefined, proven({ kind: "unknown", why: "no template" }))).toMatchObject({
      _tag: "Refused",
      cause: "unknown-owner"
    })
  })
})
