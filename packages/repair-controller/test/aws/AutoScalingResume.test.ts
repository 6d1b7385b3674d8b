// The record is the only state (#25): the Auto Scaling adapter resumes from the repair's record alone. A fresh
// adapter is a controller restarted after a SIGKILL (no memory); the group is in memory, its clock the TestClock.
import { describe, expect, it } from "@effect/vitest"
import type { AutoScalingGroup, AutoScalingInstanceDetails } from "@aws-sdk/client-auto-scaling"
import type { Instance } from "@aws-sdk/client-ec2"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import type { GroupRepair, LaunchOptions, Replacement } from "../../src/cloud/CloudProvider.ts"
import type { AutoScalingApi } from "../../src/cloud/aws/AutoScalingApi.ts"
import { makeAutoScalingGroups } from "../../src/cloud/aws/AutoScalingGroups.ts"
import type { Ec2Instances } from "../../src/cloud/aws/Ec2Instances.ts"
import { parseRecord, type RepairRecord, serializeRecord } from "../../src/domain/RepairRecord.ts"
import type { OwnerPorts } from "../../src/owner/MachineOwner.ts"
import { makeOwners } from "../../src/owner/Owners.ts"
import { groupRepairs } from "../../src/owner/autoScalingOwner.ts"
import { advance, newRepairRecord } from "../../src/repair/stateMachine.ts"
import { xid79Match } from "../fixtures.ts"

const T0 = Date.parse("2026-12-01T10:00:00Z")

interface Member {
  readonly launchMs: number
  lifecycle: string
  terminatedMs?: number
}

/** One Auto Scaling group ("g") and its instances, as AWS would answer; `launch` is the group catching up. */
const fakeGroup = (initial: ReadonlyArray<string>, over: { desired?: number; max?: number } = {}) => {
  const members = new Map<string, Member>(
    initial.map((id) => [id, { launchMs: T0 - 3_600_000, lifecycle: "InService" }])
  )
  const calls: Array<readonly [string, ...ReadonlyArray<unknown>]> = []
  const g = { desired: over.desired ?? initial.length, max: over.max ?? 10, seq: 0 }
  const live = () => [...members].filter(([, m]) => !/^Terminat/.test(m.lifecycle))
  const api: AutoScalingApi = {
    membership: (id) =>
      Effect.sync(() => {
        const m = members.get(id)
        return m && m.terminatedMs === undefined
          ? ({
              InstanceId: id,
              AutoScalingGroupName: "g",
              LifecycleState: m.lifecycle
            } as AutoScalingInstanceDetails)
          : undefined
      }),
    describeGroup: (name) =>
      Effect.sync(
        (): AutoScalingGroup | undefined =>
          ({
            AutoScalingGroupName: name,
            DesiredCapacity: g.desired,
            MaxSize: g.max,
            MinSize: 0,
            Instances: [...members]
              .filter(([, m]) => m.terminatedMs === undefined)
              .map(([id, m]) => ({ InstanceId: id, LifecycleState: m.lifecycle }))
          }) as AutoScalingGroup
      ),
    setDesiredCapacity: (_group, desired) =>
      Effect.sync(() => {
        calls.push(["SetDesiredCapacity", desired])
        g.desired = desired
      }),
    terminateInGroup: (id, decrement) =>
      Effect.gen(function* () {
        calls.push(["TerminateInstanceInAutoScalingGroup", id, decrement])
        const m = members.get(id)
        if (m) {
          m.lifecycle = "Terminating"
          m.terminatedMs = yield* Clock.currentTimeMillis
        }
        if (decrement) g.desired -= 1
      }),
    activities: () => Effect.succeed([])
  }
  const instance = (id: string): Instance | undefined => {
    const m = members.get(id)
    if (!m) return undefined
    const at = m.terminatedMs === undefined ? undefined : new Date(m.terminatedMs).toISOString()
    return {
      InstanceId: id,
      LaunchTime: new Date(m.launchMs),
      PrivateDnsName: `ip-${id}`,
      Placement: { AvailabilityZone: "us-west-2a" },
      State: { Name: m.terminatedMs === undefined ? "running" : "terminated" },
      ...(at ? { StateTransitionReason: `User initiated (${at.slice(0, 10)} ${at.slice(11, 19)} GMT)` } : {})
    } as Instance
  }
  const instances: Ec2Instances = {
    describe: (id) => Effect.sync(() => instance(id)),
    describeAll: (ids) => Effect.sync(() => ids.flatMap((id) => instance(id) ?? [])),
    state: (id) => Effect.sync(() => (instance(id) ? "running" : "not-found"))
  }
  /** The group launches members, at the clock's time, until it has its desired capacity. */
  const catchUp = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const launched: string[] = []
    while (live().length < g.desired) {
      const id = `i-new${++g.seq}`
      members.set(id, { launchMs: now, lifecycle: "InService" })
      launched.push(id)
    }
    return launched
  })
  return { api, instances, calls, g, catchUp, adapter: () => makeAutoScalingGroups(api, instances) }
}

/** The journal as the adapter needs it: each repair's (by the instance it replaces) replacement and request time. */
interface Journal {
  readonly records: Map<string, Replacement | undefined>
  readonly requestedAt: Map<string, number>
}
const journalOf = (...repairs: ReadonlyArray<string>): Journal => ({
  records: new Map(repairs.map((old) => [old, undefined])),
  requestedAt: new Map()
})

const ask = (
  adapter: ReturnType<ReturnType<typeof fakeGroup>["adapter"]>,
  old: string,
  journal: Journal,
  opts: { capacityFirst?: boolean; membersBefore?: ReadonlyArray<string>; journaled?: boolean } = {}
) =>
  Effect.gen(function* () {
    const previous = journal.records.get(old)
    const requestedAtMs = journal.requestedAt.get(old)
    const options: LaunchOptions = {
      facts: { instanceId: old, state: "running", launch: {}, owner: { kind: "autoScaling", group: "g" } },
      avoidZones: [],
      idempotencyToken: `r-${old}`,
      capacityFirst: opts.capacityFirst ?? true,
      ...(previous !== undefined ? { previous } : {}),
      ...(requestedAtMs !== undefined ? { requestedAtMs } : {}),
      ...(opts.membersBefore !== undefined ? { membersBefore: opts.membersBefore } : {}),
      others: (): ReadonlyArray<GroupRepair> =>
        [...journal.records].flatMap(([replaces, replacement]) =>
          replaces === old ? [] : [{ replaces, replacement, ended: false }]
        )
    }
    const answer = yield* adapter.replacement(
      { name: `n-${old}`, providerID: `aws:///us-west-2a/${old}`, labels: {}, annotations: {} },
      { instanceId: old, zone: "us-west-2a" },
      "g",
      options
    )
    // The runner journals the answer (the first one with the time it asked), unless the controller dies first.
    if (opts.journaled !== false) {
      journal.records.set(old, answer)
      if (requestedAtMs === undefined) journal.requestedAt.set(old, yield* Clock.currentTimeMillis)
    }
    return answer
  })

const sets = (calls: ReadonlyArray<readonly [string, ...ReadonlyArray<unknown>]>) =>
  calls.filter((c) => c[0] === "SetDesiredCapacity").map((c) => c[1])

describe("Auto Scaling capacity first resumes from the record alone", () => {
  it.effect(
    "a crash after the plan is journaled, before SetDesiredCapacity: grown once, other plans count it",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const group = fakeGroup(["i-a", "i-b"])
        const journal = journalOf("i-a")
        const planned = yield* ask(group.adapter(), "i-a", journal)
        expect(planned).toEqual({
          autoScalingGroup: "g",
          desiredCapacity: 3,
          groupGrown: false,
          membersBefore: ["i-a", "i-b"]
        })
        expect(sets(group.calls)).toEqual([])
        // SIGKILL. The restarted controller has the records only: another repair of the group planning now reads
        // i-a's size from its record (3 + 1, not the group's 2 + 1).
        const restarted = group.adapter()
        journal.records.set("i-b", undefined)
        expect(yield* ask(restarted, "i-b", journal)).toMatchObject({ desiredCapacity: 4, groupGrown: false })
        expect(yield* ask(restarted, "i-a", journal)).toMatchObject({ desiredCapacity: 3, groupGrown: true })
        expect(yield* ask(restarted, "i-b", journal)).toMatchObject({ desiredCapacity: 4, groupGrown: true })
        yield* TestClock.adjust("1500 millis")
        const [member] = yield* group.catchUp
        expect(yield* ask(restarted, "i-a", journal)).toMatchObject({
          instanceId: member,
          nodeName: `ip-${member}`
        })
        expect(sets(group.calls)).toEqual([3, 4])
      })
  )

  it.effect("after a restart, a member there before the plan but launched in its second is not taken", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const group = fakeGroup(["i-a", "i-b"])
      // The group scales out on its own just before the repair asks, in the same second (EC2 counts whole seconds).
      group.g.desired = 3
      const [early] = yield* group.catchUp
      yield* TestClock.adjust("300 millis")
      const journal = journalOf("i-a")
      expect(yield* ask(group.adapter(), "i-a", journal)).toMatchObject({
        membersBefore: ["i-a", "i-b", early]
      })
      const restarted = group.adapter()
      yield* ask(restarted, "i-a", journal)
      yield* TestClock.adjust("1500 millis")
      const [mine] = yield* group.catchUp
      expect(yield* ask(restarted, "i-a", journal)).toMatchObject({ instanceId: mine })
      expect(sets(group.calls)).toEqual([4])
    })
  )

  it.effect("a crash after SetDesiredCapacity, before groupGrown is journaled: not grown again", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const group = fakeGroup(["i-a", "i-b"])
      const journal = journalOf("i-a")
      const first = group.adapter()
      yield* ask(first, "i-a", journal)
      // Grown, and SIGKILLed before the answer reached the journal.
      expect(yield* ask(first, "i-a", journal, { journaled: false })).toMatchObject({ groupGrown: true })
      expect(journal.records.get("i-a")).toMatchObject({ desiredCapacity: 3, groupGrown: false })
      const restarted = group.adapter()
      // Another repair of the group planning now reads the first one's size from its record: 3 + 1, not 2 + 1.
      journal.records.set("i-b", undefined)
      const other = yield* ask(restarted, "i-b", journal)
      expect(other).toMatchObject({ desiredCapacity: 4, groupGrown: false })
      expect(yield* ask(restarted, "i-a", journal)).toMatchObject({ desiredCapacity: 3, groupGrown: true })
      expect(sets(group.calls)).toEqual([3])
    })
  )

  it.effect("a crash after the claim is journaled: the same member, never another repair's", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0)
      const group = fakeGroup(["i-a", "i-b", "i-c"])
      const journal = journalOf("i-a", "i-b")
      const first = group.adapter()
      // Two repairs of the group plan (3 + 1, then 4 + 1) and grow it; it launches two members in one second.
      yield* ask(first, "i-a", journal)
      yield* ask(first, "i-b", journal)
      yield* ask(first, "i-a", journal)
      yield* ask(first, "i-b", journal)
      expect(group.g.desired).toBe(5)
      yield* TestClock.adjust("1 second")
      const [x, y] = yield* group.catchUp
      expect(yield* ask(first, "i-a", journal)).toMatchObject({ instanceId: x })
      // SIGKILL. Both members are new to i-b and launched since it asked: only i-a's record says x is taken.
      const restarted = group.adapter()
      expect(yield* ask(restarted, "i-b", journal)).toMatchObject({ instanceId: y })
      expect(yield* ask(restarted, "i-a", journal)).toMatchObject({ instanceId: x })
      expect(sets(group.calls)).toEqual([4, 5])
    })
  )

  it.effect(
    "a claim lost in a crash (not journaled) is found again, and no other repair took it meanwhile",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const group = fakeGroup(["i-a", "i-b"])
        const a = journalOf("i-a", "i-b")
        const b = a
        const adapter = group.adapter()
        yield* ask(adapter, "i-a", a)
        yield* ask(adapter, "i-b", b)
        yield* ask(adapter, "i-a", a)
        yield* ask(adapter, "i-b", b)
        expect(group.g.desired).toBe(4)
        yield* TestClock.adjust("1 second")
        const [x, y] = yield* group.catchUp
        // i-a claims a member; before it is journaled, i-b (same process) asks: the answer not yet journaled counts.
        const claimed = yield* ask(adapter, "i-a", a, { journaled: false })
        const otherClaim = yield* ask(adapter, "i-b", b)
        expect(new Set([claimed.instanceId, otherClaim.instanceId])).toEqual(new Set([x, y]))
        // SIGKILL: i-a's claim is gone with the process; the restarted one gives it the member nobody recorded.
        expect(yield* ask(group.adapter(), "i-a", a)).toMatchObject({ instanceId: claimed.instanceId })
      })
  )

  it.effect(
    "a record of the previous version (no members before): resumes without growing, by launch time",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const group = fakeGroup(["i-a", "i-b"], { desired: 3 })
        // Grown by the previous version (desired 3 already), its record without `membersBefore` nor `groupGrown`.
        const journal: Journal = {
          records: new Map([["i-a", { autoScalingGroup: "g", desiredCapacity: 3 }]]),
          requestedAt: new Map([["i-a", T0]])
        }
        yield* TestClock.adjust("2 seconds")
        const [x] = yield* group.catchUp
        const restarted = group.adapter()
        expect(yield* ask(restarted, "i-a", journal)).toMatchObject({ groupGrown: true })
        expect(yield* ask(restarted, "i-a", journal)).toMatchObject({ instanceId: x })
        expect(sets(group.calls)).toEqual([])
      })
  )
})

describe("Auto Scaling remove first resumes from the record alone", () => {
  it.effect(
    "the members are recorded before the termination; a restarted controller finds the replacement",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const group = fakeGroup(["i-a", "i-b"])
        const first = group.adapter()
        const before = yield* first.membersBeforeRemoval("i-a")
        expect(before).toEqual({ group: "g", members: ["i-a", "i-b"] })
        yield* first.terminate("i-a", false)
        // Asked again after the terminate (a repeat): it is leaving, so nothing is recorded from now on.
        expect(yield* first.membersBeforeRemoval("i-a")).toBeUndefined()
        yield* TestClock.adjust("500 millis")
        const [x] = yield* group.catchUp
        const journal = journalOf("i-a")
        const restarted = group.adapter()
        expect(
          yield* ask(restarted, "i-a", journal, { capacityFirst: false, membersBefore: before!.members })
        ).toMatchObject({ instanceId: x, autoScalingGroup: "g" })
        expect(group.calls).toEqual([["TerminateInstanceInAutoScalingGroup", "i-a", false]])
      })
  )
})

describe("the Auto Scaling owner journals before it acts", () => {
  const record = (capacityFirst: boolean, id = "r1", instanceId = "i-a"): RepairRecord =>
    newRepairRecord(
      {
        id,
        match: xid79Match(T0, { capacityFirst }),
        node: {
          name: `n-${instanceId}`,
          uid: "u1",
          providerID: `aws:///us-west-2a/${instanceId}`,
          labels: {},
          instance: { instanceId, state: "running", launch: {}, owner: { kind: "autoScaling", group: "g" } }
        }
      },
      T0
    )

  it.effect(
    "remove first: the group's members are a Fact first, the terminate comes only once they are recorded",
    () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(T0)
        const calls: string[] = []
        const ports = {
          cloud: {
            name: "aws",
            describe: () => Effect.succeed("running" as const),
            terminate: (_n: unknown, o?: { replaced?: boolean }) =>
              Effect.sync(() => {
                calls.push(`terminate replaced=${o?.replaced}`)
                return "shutting-down" as const
              }),
            autoScaling: {
              launchReplacement: () => Effect.die("unused"),
              membersBeforeRemoval: () =>
                Effect.sync(() => {
                  calls.push("members")
                  return { group: "g", members: ["i-a", "i-b"] }
                })
            }
          },
          events: { emit: () => Effect.void, emitNow: () => Effect.void, emitDeduped: () => Effect.void },
          repairs: () => []
        } as unknown as OwnerPorts
        const r = { ...record(false), phase: "Terminating" as const }
        const owner = makeOwners(ports).of(r)
        const first = yield* owner.removeMachine(r)
        expect(first).toEqual({
          _tag: "Fact",
          fact: { _tag: "RemovalRecorded", group: "g", membersBefore: ["i-a", "i-b"] }
        })
        expect(calls).toEqual(["members"])
        const recorded = advance(r, (first as Extract<typeof first, { _tag: "Fact" }>).fact, T0)
        expect(recorded.removedFromGroup).toEqual({ group: "g", membersBefore: ["i-a", "i-b"] })
        expect(recorded.phase).toBe("Terminating")
        expect(yield* owner.removeMachine(recorded)).toEqual({
          _tag: "Fact",
          fact: { _tag: "TerminateRequested" }
        })
        expect(calls).toEqual(["members", "terminate replaced=false"])
      })
  )

  it("the other repairs of a group come from the journal's records (ended ones too, other groups not)", () => {
    const mine = record(true)
    const other = { ...record(true, "r2", "i-b"), replacement: { instanceId: "i-x", autoScalingGroup: "g" } }
    const failed = { ...record(true, "r3", "i-c"), phase: "Failed" as const }
    const elsewhere = {
      ...record(true, "r4", "i-d"),
      node: {
        ...record(true, "r4", "i-d").node,
        instance: {
          ...record(true, "r4", "i-d").node.instance,
          owner: { kind: "autoScaling" as const, group: "h" }
        }
      }
    }
    expect(groupRepairs([mine, other, failed, elsewhere], mine)).toEqual([
      { replaces: "i-b", replacement: { instanceId: "i-x", autoScalingGroup: "g" }, ended: false },
      { replaces: "i-c", replacement: undefined, ended: true }
    ])
  })

  it("records with and without the new fields decode (the previous version's records resume)", () => {
    const r = {
      ...record(true),
      phase: "Replacing" as const,
      replacement: {
        autoScalingGroup: "g",
        desiredCapacity: 3,
        groupGrown: false,
        membersBefore: ["i-a", "i-b"]
      },
      removedFromGroup: { group: "g", membersBefore: ["i-a"] }
    }
    const parsed = parseRecord(serializeRecord(r))
    expect(parsed._tag === "Success" && parsed.success).toEqual(r)
    const { removedFromGroup: _gone, ...previousVersion } = {
      ...r,
      replacement: { autoScalingGroup: "g", desiredCapacity: 3 }
    }
    const old = parseRecord(JSON.stringify(previousVersion))
    expect(old._tag === "Success" && old.success.replacement).toEqual({
      autoScalingGroup: "g",
      desiredCapacity: 3
    })
  })
})
