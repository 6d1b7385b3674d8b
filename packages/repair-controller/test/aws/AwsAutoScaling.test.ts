// Auto Scaling group members through the AWS provider against the fake cloud's Auto Scaling API (real SDK on the
// wire): replaced and removed through the group, never with RunInstances; capacity first grows the group once.
import { AdminClient, type FakeCloud, startFakeCloud } from "@nodemend/fake-cloud"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { CloudProvider, type NodeRef, type Replacement } from "../../src/cloud/CloudProvider.ts"
import { AwsCloudProvider } from "../../src/cloud/aws/AwsCloudProvider.ts"
import { awsConfig, clientsFor, groupsOf, LAUNCH_TEMPLATE, nodeRefOf } from "./support.ts"

let cloud: FakeCloud
let admin: AdminClient

beforeAll(async () => {
  cloud = await startFakeCloud({ region: "us-west-2", bootDelayMs: 10, terminateDelayMs: 30 })
  admin = new AdminClient(cloud.url)
})
afterAll(() => cloud.close())

/** A fresh provider each time: a new one is what a restarted controller has (no memory). */
const withProvider = <A, E>(f: (p: CloudProvider["Service"]) => Effect.Effect<A, E>): Effect.Effect<A, E> => {
  const config = awsConfig(cloud.url, { terminationWaitSeconds: 5 })
  return Effect.gen(function* () {
    return yield* f(yield* CloudProvider)
  }).pipe(Effect.provide(AwsCloudProvider.layerWithClients(config, clientsFor(config))))
}

const promise = <A>(f: () => Promise<A>) => Effect.promise(f)
const group = (name: string, minSize: number, maxSize: number, desiredCapacity: number) =>
  promise(() =>
    admin.createAutoScalingGroup({
      name,
      launchTemplateId: LAUNCH_TEMPLATE,
      instanceType: "g5.xlarge",
      zones: ["us-west-2a", "us-west-2b"],
      minSize,
      maxSize,
      desiredCapacity,
      tags: { "nodemend.io/pool": name }
    })
  )
const live = (name: string) =>
  promise(() => admin.autoScalingGroup(name)).pipe(
    Effect.map((g) => g.members.filter((m) => m.lifecycleState !== "Terminating"))
  )
const nodeOf = (instanceId: string) =>
  promise(() => admin.instances()).pipe(
    Effect.map((all) => nodeRefOf(all.find((i) => i.instanceId === instanceId)!))
  )
const runInstancesCalls = promise(() => admin.stats()).pipe(Effect.map((s) => s.calls.RunInstances ?? 0))

const askUntilMember = (
  p: CloudProvider["Service"],
  node: NodeRef,
  options: Parameters<CloudProvider["Service"]["launchReplacement"]>[1],
  journal?: Map<string, Replacement>
) =>
  Effect.gen(function* () {
    // Each answer is journaled as the repair's record, and the next ask carries it (`previous`), as the runner does.
    let previous = options.previous
    for (let i = 0; i < 50; i++) {
      const r: Replacement = yield* groupsOf(p).launchReplacement(node, {
        ...options,
        ...(previous !== undefined ? { previous } : {})
      })
      journal?.set(options.facts.instanceId, r)
      if (r.instanceId) return r
      previous = r
      yield* Effect.sleep("20 millis")
    }
    throw new Error("the group launched no member")
  })

describe("Auto Scaling group member", () => {
  it.live(
    "capacity first: grown once to desired+1, the new member reported, then terminated with decrement back to size",
    () =>
      withProvider((p) =>
        Effect.gen(function* () {
          const g = yield* group("cf", 1, 4, 2)
          const old = g.members[0]!.instanceId
          const node = yield* nodeOf(old)
          const facts = yield* p.inspect(node)
          expect(facts.owner).toEqual({ kind: "autoScaling", group: "cf" })
          const runsBefore = yield* runInstancesCalls
          // EC2 launch times are whole seconds: a restarted provider tells the group's new member from those there
          // before by its launch time only, so the request is made in a later second than the group's start.
          yield* Effect.sleep("1100 millis")
          const requestedAtMs = Date.now()
          const options = {
            facts,
            avoidZones: [],
            idempotencyToken: "r-cf",
            capacityFirst: true,
            requestedAtMs
          }
          const desired = () =>
            promise(() => admin.autoScalingGroup("cf")).pipe(Effect.map((x) => x.desiredCapacity))
          // First the target, for the journal, without growing: a crash before it is recorded grows nothing.
          const planned = yield* groupsOf(p).launchReplacement(node, options)
          expect(planned).toEqual({
            autoScalingGroup: "cf",
            desiredCapacity: 3,
            groupGrown: false,
            membersBefore: g.members.map((m) => m.instanceId)
          })
          expect(yield* desired()).toBe(2)
          // Asked with the target recorded: grown once.
          const asked = yield* groupsOf(p).launchReplacement(node, { ...options, previous: planned })
          expect(asked).toMatchObject({ autoScalingGroup: "cf", desiredCapacity: 3, groupGrown: true })
          expect(yield* desired()).toBe(3)
          // Asked again with the recorded target (as the repair record carries it): no second growth.
          const found = yield* askUntilMember(p, node, { ...options, previous: asked })
          expect((yield* promise(() => admin.autoScalingGroup("cf"))).desiredCapacity).toBe(3)
          const newcomer = (yield* live("cf")).find((m) => m.instanceId === found.instanceId)!
          expect(found).toEqual({
            instanceId: newcomer.instanceId,
            nodeName: newcomer.nodeName,
            zone: newcomer.zone,
            autoScalingGroup: "cf",
            desiredCapacity: 3,
            groupGrown: true,
            membersBefore: planned.membersBefore
          })
          // A restarted controller (fresh provider) with the record: the same member, still no growth.
          const again = yield* withProvider((fresh) =>
            groupsOf(fresh).launchReplacement(node, {
              ...options,
              previous: { autoScalingGroup: "cf", desiredCapacity: 3, groupGrown: true }
            })
          )
          // A controller that crashed after growing but before recording it (groupGrown not yet in the journal):
          // the group is that large already, so it is not grown again.
          yield* withProvider((fresh) =>
            groupsOf(fresh).launchReplacement(node, {
              ...options,
              previous: { autoScalingGroup: "cf", desiredCapacity: 3 }
            })
          )
          expect(again.instanceId).toBe(found.instanceId)
          expect((yield* promise(() => admin.autoScalingGroup("cf"))).desiredCapacity).toBe(3)

          expect(yield* p.terminate(node, { replaced: true })).toBe("terminated")
          const after = yield* promise(() => admin.autoScalingGroup("cf"))
          expect(after.desiredCapacity).toBe(2)
          expect((yield* live("cf")).map((m) => m.instanceId).sort()).toEqual(
            [found.instanceId, g.members[1]!.instanceId].sort()
          )
          // Terminating again (a repeat after a crash) changes nothing.
          expect(yield* p.terminate(node, { replaced: true })).toBe("terminated")
          expect((yield* promise(() => admin.autoScalingGroup("cf"))).desiredCapacity).toBe(2)
          expect(yield* runInstancesCalls).toBe(runsBefore)
        })
      )
  )

  it.live("two repairs in one group: each grows it once and gets its own member", () =>
    withProvider((p) =>
      Effect.gen(function* () {
        const g = yield* group("two", 0, 6, 2)
        const [a, b] = yield* Effect.forEach(g.members, (m) => nodeOf(m.instanceId))
        // The two records, as the journal holds them: each repair sees the other's plan and member there.
        const journal = new Map<string, Replacement>()
        const others = (self: string) => () =>
          [...journal].flatMap(([replaces, replacement]) =>
            replaces === self ? [] : [{ replaces, replacement, ended: false }]
          )
        const ask = (node: NodeRef, token: string) =>
          Effect.gen(function* () {
            const facts = yield* p.inspect(node)
            const options = {
              facts,
              avoidZones: [],
              idempotencyToken: token,
              capacityFirst: true,
              others: others(facts.instanceId)
            }
            const asked = yield* groupsOf(p).launchReplacement(node, {
              ...options,
              requestedAtMs: Date.now()
            })
            journal.set(facts.instanceId, asked)
            return yield* askUntilMember(p, node, { ...options, previous: asked }, journal)
          })
        const [ra, rb] = yield* Effect.all([ask(a!, "ra"), ask(b!, "rb")], { concurrency: 2 })
        expect((yield* promise(() => admin.autoScalingGroup("two"))).desiredCapacity).toBe(4)
        expect(ra.instanceId).not.toBe(rb.instanceId)
        expect(new Set([ra.desiredCapacity, rb.desiredCapacity])).toEqual(new Set([3, 4]))
      })
    )
  )

  it.live("remove first: terminated without decrement, the group's own replacement is reported", () =>
    withProvider((p) =>
      Effect.gen(function* () {
        const g = yield* group("rf", 1, 2, 1)
        const old = g.members[0]!.instanceId
        const node = yield* nodeOf(old)
        const facts = yield* p.inspect(node)
        const runsBefore = yield* runInstancesCalls
        expect(yield* p.terminate(node, { replaced: false })).toBe("terminated")
        const options = { facts, avoidZones: [], idempotencyToken: "r-rf", capacityFirst: false }
        const r = yield* groupsOf(p).launchReplacement(node, options)
        const [member] = yield* live("rf")
        expect(r).toMatchObject({
          instanceId: member!.instanceId,
          nodeName: member!.nodeName,
          autoScalingGroup: "rf"
        })
        expect(yield* groupsOf(p).launchReplacement(node, options)).toEqual(r)
        expect((yield* promise(() => admin.autoScalingGroup("rf"))).desiredCapacity).toBe(1)
        expect(yield* runInstancesCalls).toBe(runsBefore)
      })
    )
  )

  it.live("a group at MaxSize: a non-retryable CloudError that says so, and the group is not touched", () =>
    withProvider((p) =>
      Effect.gen(function* () {
        const g = yield* group("full", 1, 2, 2)
        const node = yield* nodeOf(g.members[0]!.instanceId)
        const facts = yield* p.inspect(node)
        const setBefore = (yield* promise(() => admin.stats())).calls.SetDesiredCapacity ?? 0
        const err = yield* Effect.flip(
          groupsOf(p).launchReplacement(node, {
            facts,
            avoidZones: [],
            idempotencyToken: "r-full",
            capacityFirst: true
          })
        )
        expect(err).toMatchObject({ _tag: "CloudError", retryable: false })
        expect(err.message).toMatch(/^Auto Scaling group full is at its MaxSize \(2, desired 2\)/)
        expect((yield* promise(() => admin.autoScalingGroup("full"))).desiredCapacity).toBe(2)
        expect((yield* promise(() => admin.stats())).calls.SetDesiredCapacity ?? 0).toBe(setBefore)
      })
    )
  )

  it.live("the group fails to launch (capacity): a non-retryable CloudError with the group's reason", () =>
    withProvider((p) =>
      Effect.gen(function* () {
        const g = yield* group("short", 1, 3, 1)
        const node = yield* nodeOf(g.members[0]!.instanceId)
        const facts = yield* p.inspect(node)
        yield* promise(() =>
          admin.setLaunchFailure("short", "We currently do not have sufficient g5.xlarge capacity.")
        )
        const options = {
          facts,
          avoidZones: [],
          idempotencyToken: "r-short",
          capacityFirst: true,
          requestedAtMs: Date.now()
        }
        const planned = yield* groupsOf(p).launchReplacement(node, options)
        const asked = yield* groupsOf(p).launchReplacement(node, { ...options, previous: planned })
        const err = yield* Effect.flip(groupsOf(p).launchReplacement(node, { ...options, previous: asked }))
        expect(err).toMatchObject({ _tag: "CloudError", retryable: false })
        expect(err.message).toBe(
          `Auto Scaling group short failed to launch the replacement of ${g.members[0]!.instanceId}: We currently do not have sufficient g5.xlarge capacity.`
        )
      })
    )
  )

  it.live("a member terminated through its group while it is already leaving is not terminated twice", () =>
    withProvider((p) =>
      Effect.gen(function* () {
        const g = yield* group("once", 0, 3, 2)
        const node = yield* nodeOf(g.members[0]!.instanceId)
        yield* Effect.all([p.terminate(node, { replaced: true }), p.terminate(node, { replaced: true })], {
          concurrency: 2
        })
        expect((yield* promise(() => admin.autoScalingGroup("once"))).desiredCapacity).toBe(1)
      })
    )
  )
})
