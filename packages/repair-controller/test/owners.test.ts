// The owner port (issue #25): one proof for every owner, one adapter per owner, picked from the record only.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CloudError, type CloudProvider, InstanceMismatch } from "../src/cloud/CloudProvider.ts"
import type { Owner } from "../src/domain/Instance.ts"
import type { RepairRecord } from "../src/domain/RepairRecord.ts"
import type { KarpenterCache } from "../src/karpenter/KarpenterCache.ts"
import type { NodeClaim } from "../src/karpenter/NodeClaims.ts"
import type { KubeShape } from "../src/kube/Kube.ts"
import type { OwnerPorts } from "../src/owner/MachineOwner.ts"
import { makeOwners } from "../src/owner/Owners.ts"
import { newRepairRecord } from "../src/repair/stateMachine.ts"
import { node, xid79Match } from "./fixtures.ts"

const T0 = Date.parse("2026-01-01T00:00:00Z")

const record = (owner: Owner, capacityFirst = false): RepairRecord =>
  newRepairRecord(
    {
      id: "r1",
      match: xid79Match(T0, { capacityFirst }),
      node: {
        name: "n1",
        uid: "u1",
        providerID: "aws:///us-west-2a/i-1",
        labels: {},
        instance: { instanceId: "i-1", state: "running", launch: {}, owner }
      }
    },
    T0
  )

type Call = readonly [string, ...ReadonlyArray<unknown>]

/** Ports that record every cloud and API call; `cloud` and `claims` override the answers. */
const ports = (
  over: { cloud?: Partial<CloudProvider["Service"]>; claims?: Record<string, NodeClaim> } = {}
) => {
  const calls: Call[] = []
  /** Records the call, then answers. */
  const answer = <A>(call: Call, answer: A) =>
    Effect.sync(() => {
      calls.push(call)
      return answer
    })
  const cloud = {
    name: "aws",
    inspect: () => Effect.die("unused"),
    describe: () => answer(["describe"], "running" as const),
    terminate: (_n, o) => answer(["terminate", o], "shutting-down" as const),
    reboot: () => Effect.void,
    launchReplacement: (_n, o) => answer(["launch", o.capacityFirst, o.avoidZones], { instanceId: "i-2" }),
    activeZonalShifts: Effect.succeed([]),
    locate: () => Effect.succeed(new Map()),
    autoScaling: {
      launchReplacement: (_n, group, o) =>
        answer(["group", group, o.capacityFirst, o.avoidZones], {
          autoScalingGroup: "g",
          desiredCapacity: 4
        }),
      membersBeforeRemoval: () => answer(["members"], { group: "g", members: ["i-1", "i-9"] })
    },
    ...over.cloud
  } as CloudProvider["Service"]
  const claims = over.claims ?? {}
  const karpenter = {
    present: () => true,
    claimOf: (id) => Object.values(claims).find((c) => c.status?.providerID === id),
    claim: (name) => claims[name],
    nodePool: () => undefined
  } as Partial<KarpenterCache> as KarpenterCache
  const kube = {
    http: {
      call: (op: string, method: string, path: string) => answer([op, method, path], undefined)
    },
    deleteNode: (name: string) => Effect.sync(() => void calls.push(["deleteNode", name]))
  } as unknown as KubeShape
  const p: OwnerPorts = {
    kube,
    cache: { get: () => undefined, names: () => [] },
    events: { emit: () => Effect.void, emitNow: () => Effect.void, emitDeduped: () => Effect.void },
    cloud,
    karpenter,
    avoidZones: Effect.succeed(["us-west-2c"]),
    repairs: () => []
  }
  return { calls, ports: p }
}

describe("Owners.of: the adapter comes from the record's owner, nothing else", () => {
  it("names whom each owner acts through", () => {
    const owners = makeOwners(ports().ports)
    const name = (o: Owner) => owners.of(record(o)).name(record(o))
    expect(name({ kind: "karpenter", nodeClaim: "c1" })).toBe("Karpenter NodeClaim c1")
    expect(name({ kind: "autoScaling", group: "g" })).toBe("Auto Scaling group g")
    expect(name({ kind: "standalone" })).toBe("its launch template")
    const kwok = ports({ cloud: { name: "kwok" } }).ports
    expect(
      makeOwners(kwok)
        .of(record({ kind: "standalone" }))
        .name(record({ kind: "standalone" }))
    ).toBe("the kwok provider")
  })

  it.effect("no owner: every capacity step ends the repair and touches nothing (fail closed)", () =>
    Effect.gen(function* () {
      const { calls, ports: p } = ports()
      const r = record({ kind: "unknown", why: "no launch template" })
      const owner = makeOwners(p).of(r)
      for (const step of [owner.addCapacity(r), owner.removeMachine(r), owner.removeNode(r)])
        expect(yield* step).toEqual({
          _tag: "Fact",
          fact: { _tag: "Aborted", why: "no owner to act through: no launch template" }
        })
      expect(calls).toEqual([])
      // Its word for a reboot that did not heal (the state machine ends the repair Failed); owners that can
      // replace say nothing.
      expect(owner.cannotReplace).toBe("no launch template")
      expect(makeOwners(p).of(record({ kind: "standalone" })).cannotReplace).toBeUndefined()
    })
  )
})

describe("cloud-removed owners (Auto Scaling, launch template, kwok)", () => {
  it.effect("remove: describes first; a machine already gone is not terminated again", () =>
    Effect.gen(function* () {
      const { calls, ports: p } = ports({ cloud: { describe: () => Effect.succeed("terminated" as const) } })
      const r = record({ kind: "standalone" })
      expect(yield* makeOwners(p).of(r).removeMachine(r)).toEqual({
        _tag: "Fact",
        fact: { _tag: "InstanceGone" }
      })
      expect(calls).toEqual([])
    })
  )

  it.effect("remove, capacity first: the group shrinks back (replaced)", () =>
    Effect.gen(function* () {
      const { calls, ports: p } = ports()
      const r = record({ kind: "autoScaling", group: "g" }, true)
      expect(yield* makeOwners(p).of(r).removeMachine(r)).toEqual({
        _tag: "Fact",
        fact: { _tag: "TerminateRequested" }
      })
      expect(calls).toEqual([["describe"], ["terminate", { replaced: true }]])
    })
  )

  it.effect("add capacity: avoids shifted zones; refused capacity first is the policy's fallback", () =>
    Effect.gen(function* () {
      const { calls, ports: p } = ports()
      const r = record({ kind: "standalone" })
      expect(yield* makeOwners(p).of(r).addCapacity(r)).toEqual({
        _tag: "Fact",
        fact: { _tag: "ReplacementLaunched", replacement: { instanceId: "i-2" } }
      })
      expect(calls).toEqual([["launch", false, ["us-west-2c"]]])
      const refused = new CloudError({ operation: "SetDesiredCapacity", message: "at max", retryable: false })
      const full = ports({
        cloud: {
          autoScaling: {
            launchReplacement: () => Effect.fail(refused),
            membersBeforeRemoval: () => Effect.succeed(undefined)
          }
        }
      }).ports
      const first = record({ kind: "autoScaling", group: "g" }, true)
      expect(yield* makeOwners(full).of(first).addCapacity(first)).toEqual({
        _tag: "Fact",
        fact: { _tag: "ReplacementUnavailable", why: "SetDesiredCapacity: at max" }
      })
    })
  )

  it.effect("an Auto Scaling member is replaced through its group, a standalone one from its template", () =>
    Effect.gen(function* () {
      const { calls, ports: p } = ports()
      const member = record({ kind: "autoScaling", group: "g" }, true)
      const alone = record({ kind: "standalone" }, true)
      yield* makeOwners(p).of(member).addCapacity(member)
      yield* makeOwners(p).of(alone).addCapacity(alone)
      expect(calls).toEqual([
        ["group", "g", true, ["us-west-2c"]],
        ["launch", true, ["us-west-2c"]]
      ])
      const noGroups = ports({ cloud: { name: "kwok", autoScaling: undefined } }).ports
      expect(yield* makeOwners(noGroups).of(member).addCapacity(member)).toEqual({
        _tag: "Fact",
        fact: {
          _tag: "ReplacementUnavailable",
          why: "launchReplacement: cloud provider kwok has no Auto Scaling groups"
        }
      })
    })
  )

  it.effect("await capacity after a restart asks the owner once more and reports its progress", () =>
    Effect.gen(function* () {
      const { calls, ports: p } = ports()
      const r = {
        ...record({ kind: "autoScaling", group: "g" }, true),
        phase: "Replacing" as const,
        replacement: { autoScalingGroup: "g", desiredCapacity: 4, groupGrown: true },
        replacementRequestedAt: new Date(T0).toISOString()
      }
      const owner = makeOwners(p).of(r)
      const grown = { autoScalingGroup: "g", desiredCapacity: 4, instanceId: "i-2" }
      const member = ports({
        cloud: {
          autoScaling: {
            launchReplacement: () => Effect.succeed(grown),
            membersBeforeRemoval: () => Effect.succeed(undefined)
          }
        }
      }).ports
      expect(
        yield* makeOwners(member)
          .of(r)
          .awaitCapacity(r, T0 + 60_000)
      ).toEqual({
        _tag: "Fact",
        fact: { _tag: "ReplacementProgress", replacement: grown }
      })
      // While the group has not named its member, every poll asks it again (growing nothing more).
      expect(yield* owner.awaitCapacity(r, T0 + 60_000)).toMatchObject({ _tag: "Fact" })
      expect(yield* owner.awaitCapacity(r, T0 + 60_000)).toMatchObject({ _tag: "Fact" })
      expect(calls).toEqual([
        ["group", "g", true, ["us-west-2c"]],
        ["group", "g", true, ["us-west-2c"]]
      ])
    })
  )
})

describe("the Karpenter owner", () => {
  const claim: NodeClaim = {
    metadata: { name: "c1" },
    status: { nodeName: "n1", providerID: "aws:///us-west-2a/i-1" }
  } as NodeClaim

  it.effect("remove deletes the NodeClaim (Karpenter terminates); a claim already gone is done", () =>
    Effect.gen(function* () {
      const r = record({ kind: "karpenter", nodeClaim: "c1" })
      const present = ports({ claims: { c1: claim } })
      expect(yield* makeOwners(present.ports).of(r).removeMachine(r)).toEqual({
        _tag: "Fact",
        fact: { _tag: "TerminateRequested" }
      })
      expect(present.calls).toEqual([["deleteNodeClaim", "DELETE", "/apis/karpenter.sh/v1/nodeclaims/c1"]])
      const gone = ports()
      expect(yield* makeOwners(gone.ports).of(r).removeMachine(r)).toEqual({
        _tag: "Fact",
        fact: { _tag: "InstanceGone" }
      })
      expect(gone.calls).toEqual([])
    })
  )

  it.effect(
    "release gives a failed repair's replacement back to consolidation; a succeeded one already was",
    () =>
      Effect.gen(function* () {
        const { calls, ports: p } = ports()
        const r = {
          ...record({ kind: "karpenter", nodeClaim: "c1" }, true),
          replacement: { nodeClaim: "c1-r", nodeName: "n2" }
        }
        const owner = makeOwners(p).of(r)
        yield* owner.release({ ...r, phase: "Succeeded" })
        expect(calls).toEqual([])
        yield* owner.release({ ...r, phase: "Failed" })
        expect(calls).toEqual([
          ["patchNodeClaim", "PATCH", "/apis/karpenter.sh/v1/nodeclaims/c1-r"],
          ["patchNode", "PATCH", "/api/v1/nodes/n2"]
        ])
      })
  )
})

describe("Owners.prove: the cloud vouches first, for every owner", () => {
  it.effect("a cloud that cannot answer is retried; a machine that is not this Node is refused", () =>
    Effect.gen(function* () {
      const n = node("n1")
      const busy = new CloudError({ operation: "DescribeInstances", message: "throttled", retryable: true })
      const retry = ports({ cloud: { inspect: () => Effect.fail(busy) } }).ports
      expect(yield* makeOwners(retry).prove(n)).toEqual({ _tag: "Retry", error: "throttled" })
      const forged = new InstanceMismatch({ node: "n1", providerID: "kwok://x", message: "not n1's" })
      const refused = ports({ cloud: { inspect: () => Effect.fail(forged) } }).ports
      expect(yield* makeOwners(refused).prove(n)).toEqual({
        _tag: "Refused",
        cause: "identity",
        why: "not n1's"
      })
    })
  )
})
