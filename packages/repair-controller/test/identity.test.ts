import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import type { InstanceFacts } from "../src/cloud/CloudProvider.ts"
import { decodeConfig } from "../src/config/ConfigFile.ts"
import { identityRefusal, liveNodeMismatch } from "../src/decide/identity.ts"
import { newRepairRecord } from "../src/repair/stateMachine.ts"
import type { PolicyMatch } from "../src/decide/policyMatch.ts"
import { node } from "./fixtures.ts"

const config = Result.getOrThrow(decodeConfig({}))
const facts = (over: Partial<InstanceFacts> = {}): InstanceFacts => ({
  instanceId: "i-0abc",
  state: "running",
  zone: "us-west-2a",
  pool: "gpu",
  launch: {},
  owner: { kind: "standalone" },
  ...over
})
const zoned = (pool: string | undefined, zone: string | undefined) =>
  node("n1", [], {
    ...(pool !== undefined ? { pool } : {}),
    labels: zone !== undefined ? { "topology.kubernetes.io/zone": zone } : {}
  })

describe("identityRefusal: the cloud, not the node's labels, says which pool and zone", () => {
  it("labels that agree with the cloud pass", () => {
    expect(identityRefusal(config, zoned("gpu", "us-west-2a"), facts())).toBeUndefined()
  })
  it("a node that moved itself to another pool (or out of every pool) is refused", () => {
    expect(identityRefusal(config, zoned("cheap", "us-west-2a"), facts())).toContain("is tagged gpu")
    expect(identityRefusal(config, zoned(undefined, "us-west-2a"), facts())).toContain("says (none)")
  })
  it("a node that moved itself out of a shifted zone is refused", () => {
    expect(identityRefusal(config, zoned("gpu", "us-west-2b"), facts())).toContain("is in us-west-2a")
    expect(identityRefusal(config, zoned("gpu", undefined), facts())).toContain("is in us-west-2a")
  })
  it("a cloud that names no pool or zone leaves the labels unchecked (docs/security.md says so)", () => {
    expect(
      identityRefusal(config, zoned("any", "any"), facts({ pool: undefined, zone: undefined }))
    ).toBeUndefined()
  })
})

describe("liveNodeMismatch: every step acts only on the Node the repair started on", () => {
  const match = {
    conditionType: "KernelReady",
    status: "False",
    reason: "R",
    action: "Replace"
  } as PolicyMatch
  const record = newRepairRecord(
    {
      id: "r",
      match,
      node: {
        name: "n1",
        uid: "u1",
        providerID: "kwok://n1",
        labels: {},
        instance: facts({ instanceId: "kwok://n1" })
      }
    },
    0
  )
  it("the same Node, or none (it may be gone), is no mismatch", () => {
    expect(liveNodeMismatch(record, { ...node("n1"), uid: "u1" })).toBeUndefined()
    expect(liveNodeMismatch(record, undefined)).toBeUndefined()
  })
  it("another object under the same name, or another providerID, is", () => {
    expect(liveNodeMismatch(record, { ...node("n1"), uid: "u2" })).toContain("uid u1 is now u2")
    expect(liveNodeMismatch(record, { ...node("n1"), uid: "u1", providerID: "aws:///z/i-1" })).toContain(
      "providerID kwok://n1 is now aws:///z/i-1"
    )
  })
})
