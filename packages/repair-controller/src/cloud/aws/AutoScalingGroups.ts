/**
 * Auto Scaling group members are replaced and removed through their group, never with RunInstances (#16).
 * Capacity first: the group is grown by one to an absolute size (AutoScalingGrowth.ts) and the member it launches
 * for the repair is reported once it exists; the old member is then terminated with ShouldDecrementDesiredCapacity
 * so the group returns to its size. Remove first: the old member is terminated without decrement and the group
 * launches its replacement (AutoScalingReplacement.ts).
 *
 * The repair record is the only state (#25). What a repair needs to resume is in its own record, journaled before
 * the cloud call it guards: the size it planned (`previous.desiredCapacity`, with the group's members then,
 * `previous.membersBefore`) before SetDesiredCapacity, whether it was set (`groupGrown`), the member it claimed
 * (`previous.instanceId`), and for remove first the members before the termination (`membersBefore`). What the
 * other repairs of a group planned and claimed is read from their records (`others`), never kept here. Kept in
 * process memory, both only mutual exclusion among the repairs this process runs at once: a lock per group (two
 * repairs must not both read desired N and set N + 1, nor both claim one new member), and, under it, each repair's
 * last answer until its record carries it: the one journal write between an answer and its record is the only
 * moment another repair of the group could not read it from the record. A crash loses no more than an answer not
 * yet journaled; the repair asks again and is answered from the group and its record.
 */
import { Effect, Option, Semaphore } from "effect"
import {
  CloudError,
  type GroupRepair,
  type InstanceState,
  type LaunchOptions,
  type NodeRef,
  type Replacement
} from "../CloudProvider.ts"
import type { AutoScalingApi } from "./AutoScalingApi.ts"
import { firstLaunchedSince, growthFor, launchFailure } from "./AutoScalingGrowth.ts"
import { newestReplacement, replacementCandidates, terminatedAt } from "./AutoScalingReplacement.ts"
import type { AwsInstanceRef } from "./AwsProviderId.ts"
import type { Ec2Instances } from "./Ec2Instances.ts"
import { replacementFrom } from "./InstanceFacts.ts"

export interface AutoScalingGroups {
  /**
   * Terminates a member through its group, shrinking the group when `replaced` (its replacement is already up);
   * none when the instance is no longer in a group (the caller terminates it through EC2).
   */
  readonly terminate: (
    instanceId: string,
    replaced: boolean
  ) => Effect.Effect<Option.Option<InstanceState>, CloudError>
  /**
   * Remove first, before `terminate`: the member's group and its members now, for the repair's record; none when
   * the instance is in no group or already leaving it.
   */
  readonly membersBeforeRemoval: (
    instanceId: string
  ) => Effect.Effect<
    { readonly group: string; readonly members: ReadonlyArray<string> } | undefined,
    CloudError
  >
  /** The group's replacement of `old` (see the module comment); a non-retryable CloudError when there is none. */
  readonly replacement: (
    node: NodeRef,
    old: AwsInstanceRef,
    group: string,
    options: LaunchOptions
  ) => Effect.Effect<Replacement, CloudError>
}

const notRetryable = (operation: string, message: string) =>
  new CloudError({ operation, message, retryable: false })

const LEAVING = /^Terminating/

type View = Pick<GroupRepair, "replacement" | "ended">

/** The highest size another repair planned for the group and has not set yet (0 when none). */
const pendingTarget = (others: ReadonlyArray<View>) =>
  Math.max(
    0,
    ...others.flatMap((o) =>
      !o.ended && o.replacement?.desiredCapacity !== undefined && o.replacement.groupGrown !== true
        ? [o.replacement.desiredCapacity]
        : []
    )
  )

/** The members other repairs claimed (also repairs that ended: their member is theirs). */
const claimedBy = (others: ReadonlyArray<View>) =>
  new Set(others.flatMap((o) => (o.replacement?.instanceId ? [o.replacement.instanceId] : [])))

/** Whether a record carries an answer: the same planned size, growth and member. */
const sameAnswer = (a: Replacement | undefined, b: Replacement | undefined) =>
  a?.desiredCapacity === b?.desiredCapacity &&
  a?.groupGrown === b?.groupGrown &&
  a?.instanceId === b?.instanceId

const membersOf = (instancesOfGroup: ReadonlyArray<{ InstanceId?: string | undefined }> | undefined) =>
  (instancesOfGroup ?? []).flatMap((i) => i.InstanceId ?? [])

export const makeAutoScalingGroups = (api: AutoScalingApi, instances: Ec2Instances): AutoScalingGroups => {
  /**
   * One ask at a time per group, in this process. Mutual exclusion only: what it serializes (planned sizes,
   * claimed members) is read from the records, so a restarted controller needs none of it.
   */
  const locks = new Map<string, Semaphore.Semaphore>()
  const lockOf = (group: string) => {
    let lock = locks.get(group)
    if (!lock) {
      lock = Semaphore.makeUnsafe(1)
      locks.set(group, lock)
    }
    return lock
  }
  /**
   * Under the group's lock, each repair's (keyed by the instance it replaces) last answer until its record carries
   * it: in between, the runner journals it, and another repair locked in that instant must see it all the same.
   */
  const unjournaled = new Map<string, { readonly group: string; readonly replacement: Replacement }>()

  /** The other repairs of `group` as their records say, each overlaid by its answer not yet journaled. */
  const othersOf = (group: string, old: string, options: LaunchOptions): ReadonlyArray<View> => {
    const recorded = options.others?.()
    const view = new Map<string, View>(
      (recorded ?? []).flatMap((o) => (o.replaces === old ? [] : [[o.replaces, o] as const]))
    )
    for (const [o, u] of unjournaled) {
      if (o === old || u.group !== group) continue
      const known = view.get(o)
      // Journaled by now, or its repair has ended or left the journal (its record is final): no longer needed.
      if (
        recorded !== undefined &&
        (known === undefined || known.ended || sameAnswer(known.replacement, u.replacement))
      )
        unjournaled.delete(o)
      else view.set(o, { replacement: u.replacement, ended: false })
    }
    return [...view.values()]
  }

  /** The answer to `old`'s repair, held (see `unjournaled`) until its record carries it. */
  const answer = (old: string, group: string, replacement: Replacement) => {
    unjournaled.set(old, { group, replacement })
    return replacement
  }

  const describeGroup = (group: string, old: string) =>
    api
      .describeGroup(group)
      .pipe(
        Effect.flatMap((g) =>
          g
            ? Effect.succeed(g)
            : Effect.fail(
                notRetryable(
                  "DescribeAutoScalingGroups",
                  `Auto Scaling group ${group} of instance ${old} does not exist`
                )
              )
        )
      )

  const terminate = (instanceId: string, replaced: boolean) =>
    Effect.gen(function* () {
      const member = yield* api.membership(instanceId)
      if (!member?.AutoScalingGroupName) return Option.none<InstanceState>()
      // Already leaving (a repeat after a crash, or lifecycle hooks holding it): a second call could shrink twice.
      if (LEAVING.test(member.LifecycleState ?? "")) return Option.some<InstanceState>("shutting-down")
      yield* api.terminateInGroup(instanceId, replaced)
      return Option.some<InstanceState>("shutting-down")
    })

  const membersBeforeRemoval = (instanceId: string) =>
    Effect.gen(function* () {
      const member = yield* api.membership(instanceId)
      const group = member?.AutoScalingGroupName
      // In no group (EC2 terminates it), or leaving already: the group may be launching its replacement, which a
      // snapshot taken now would count as there before.
      if (!group || LEAVING.test(member.LifecycleState ?? "")) return undefined
      const g = yield* api.describeGroup(group)
      return { group, members: membersOf(g?.Instances) }
    })

  /** A claimed replacement, with the Node name EC2 gives it once it has one. */
  const refreshed = (r: Replacement) =>
    Effect.gen(function* () {
      if (r.nodeName || !r.instanceId) return r
      const now = replacementFrom(yield* instances.describe(r.instanceId), r.zone)
      return now ? { ...r, ...now } : r
    })

  const failedLaunch = (group: string, old: string, sinceMs: number | undefined) =>
    Effect.gen(function* () {
      const why = launchFailure(yield* api.activities(group), sinceMs)
      if (why !== undefined) {
        return yield* notRetryable(
          "DescribeScalingActivities",
          `Auto Scaling group ${group} failed to launch the replacement of ${old}: ${why}`
        )
      }
    })

  /**
   * Capacity first, in two asks so that a crash never grows a group twice: the first plans the target (the
   * group's desired capacity, or another repair's planned size, + 1) and returns it, with the group's members now,
   * for the journal without growing; the next, with the target recorded (`previous`), sets it unless the group is
   * that large already (grown before a crash), and reports `groupGrown`; after that it is never set again, and
   * later asks look for the member: launched since the request, none of the members before, claimed by no other.
   */
  const capacityFirst = (old: string, group: string, options: LaunchOptions) =>
    Effect.gen(function* () {
      const g = yield* describeGroup(group, old)
      const others = othersOf(group, old, options)
      const previous = options.previous
      const floor = Math.max(g.DesiredCapacity ?? 0, pendingTarget(others))
      const plan = growthFor({ ...g, DesiredCapacity: floor }, old, previous?.desiredCapacity)
      if (plan.kind === "full") return yield* notRetryable("SetDesiredCapacity", plan.message)
      if (plan.kind === "grow")
        return answer(old, group, {
          autoScalingGroup: group,
          desiredCapacity: plan.target,
          groupGrown: false,
          membersBefore: membersOf(g.Instances)
        })
      const asked: Replacement = {
        ...previous,
        autoScalingGroup: group,
        desiredCapacity: plan.target,
        groupGrown: true
      }
      if (previous?.groupGrown !== true) {
        if ((g.DesiredCapacity ?? 0) < plan.target) {
          yield* api.setDesiredCapacity(group, plan.target).pipe(
            Effect.mapError(
              (e) =>
                new CloudError({
                  ...e,
                  message: `cannot grow Auto Scaling group ${group} to ${plan.target} for the replacement of ${old}: ${e.message}`
                })
            )
          )
          yield* Effect.logInfo("grew Auto Scaling group for a replacement", {
            group,
            replaces: old,
            desiredCapacity: plan.target
          })
        }
        // Just grown: the group launches within seconds; a later ask finds the member.
        return answer(old, group, asked)
      }
      const since = options.requestedAtMs
      const candidates = replacementCandidates(g.Instances ?? [], {
        old,
        before: previous.membersBefore === undefined ? undefined : new Set(previous.membersBefore),
        claimed: claimedBy(others),
        terminatedAtMs: undefined
      })
      const found =
        candidates.length > 0
          ? firstLaunchedSince(yield* instances.describeAll(candidates), since)
          : undefined
      const replacement = replacementFrom(found)
      if (!replacement) {
        yield* failedLaunch(group, old, since)
        return asked
      }
      return answer(old, group, { ...asked, ...replacement })
    })

  const removeFirst = (old: string, group: string, options: LaunchOptions) =>
    Effect.gen(function* () {
      const g = yield* describeGroup(group, old)
      const gone = yield* instances.describe(old)
      const terminatedAtMs = terminatedAt(gone?.StateTransitionReason)
      const search = {
        old,
        before: options.membersBefore === undefined ? undefined : new Set(options.membersBefore),
        claimed: claimedBy(othersOf(group, old, options)),
        terminatedAtMs
      }
      const candidates = replacementCandidates(g.Instances ?? [], search)
      const found =
        candidates.length > 0
          ? newestReplacement(yield* instances.describeAll(candidates), search)
          : undefined
      const replacement = replacementFrom(found)
      if (!replacement) {
        yield* failedLaunch(group, old, options.requestedAtMs ?? terminatedAtMs)
        return yield* new CloudError({
          operation: "DescribeAutoScalingGroups",
          message: `waiting for Auto Scaling group ${group} to launch the replacement of ${old}`,
          retryable: true
        })
      }
      return answer(old, group, { ...replacement, autoScalingGroup: group })
    })

  const replacement = (node: NodeRef, old: AwsInstanceRef, group: string, options: LaunchOptions) =>
    Effect.gen(function* () {
      const id = old.instanceId
      if (sameAnswer(unjournaled.get(id)?.replacement, options.previous)) unjournaled.delete(id)
      const known = options.previous
      if (known?.instanceId) return yield* refreshed(known)
      const r = yield* lockOf(group).withPermits(1)(
        options.capacityFirst ? capacityFirst(id, group, options) : removeFirst(id, group, options)
      )
      if (r.instanceId) {
        yield* Effect.logInfo("Auto Scaling group launched the replacement", {
          node: node.name,
          group,
          replaces: id,
          instanceId: r.instanceId
        })
      }
      return r
    })

  return { terminate, membersBeforeRemoval, replacement }
}
