/**
 * Auto Scaling group members are replaced and removed through their group, never with RunInstances (#16).
 * Capacity first: the group is grown by one to an absolute size (AutoScalingGrowth.ts) and the member it launches
 * for the repair is reported once it exists; the old member is then terminated with ShouldDecrementDesiredCapacity
 * so the group returns to its size. Remove first: the old member is terminated without decrement and the group
 * launches its replacement (AutoScalingReplacement.ts). Which member replaces which is remembered, so asking again
 * gives the same answer and no member is reported for two repairs; after a restart the repair's record (`previous`)
 * stands in.
 */
import { Clock, Effect, Option, Semaphore } from "effect"
import {
  CloudError,
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

export const makeAutoScalingGroups = (api: AutoScalingApi, instances: Ec2Instances): AutoScalingGroups => {
  /** The group's members when we terminated an instance without decrement (remove first). */
  const terminations = new Map<string, ReadonlySet<string>>()
  /** The group's members, and when, when we grew it for an instance (capacity first). */
  const growths = new Map<
    string,
    {
      readonly group: string
      readonly before: ReadonlySet<string>
      readonly atMs: number
      readonly target: number
      applied: boolean
    }
  >()
  /** The highest size another repair planned for `group` but has not set yet (0 when none). */
  const pendingTarget = (group: string, old: string) =>
    Math.max(
      0,
      ...[...growths].flatMap(([o, x]) => (o !== old && x.group === group && !x.applied ? [x.target] : []))
    )
  /** The replacement reported for each old instance. */
  const claims = new Map<string, Replacement>()
  /** One growth at a time per group: two repairs must not both read desired N and both set N + 1. */
  const locks = new Map<string, Semaphore.Semaphore>()
  const lockOf = (group: string) => {
    let lock = locks.get(group)
    if (!lock) {
      lock = Semaphore.makeUnsafe(1)
      locks.set(group, lock)
    }
    return lock
  }

  const claimedByOthers = (old: string) =>
    new Set([...claims].flatMap(([o, r]) => (o !== old && r.instanceId ? [r.instanceId] : [])))

  const membersOf = (instancesOfGroup: ReadonlyArray<{ InstanceId?: string | undefined }> | undefined) =>
    new Set((instancesOfGroup ?? []).flatMap((i) => i.InstanceId ?? []))

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
      if (/^Terminating/.test(member.LifecycleState ?? "")) return Option.some<InstanceState>("shutting-down")
      if (!replaced) {
        const g = yield* api.describeGroup(member.AutoScalingGroupName)
        terminations.set(instanceId, membersOf(g?.Instances))
      }
      yield* api.terminateInGroup(instanceId, replaced)
      return Option.some<InstanceState>("shutting-down")
    })

  /** A claimed replacement, with the Node name EC2 gives it once it has one. */
  const refreshed = (old: string, r: Replacement) =>
    Effect.gen(function* () {
      if (r.nodeName || !r.instanceId) return r
      const now = replacementFrom(yield* instances.describe(r.instanceId), r.zone)
      const merged = now ? { ...r, ...now } : r
      claims.set(old, merged)
      return merged
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
   * group's desired capacity, or another repair's planned size, + 1) and returns it for the journal without
   * growing; the next, with the target recorded (`previous`), sets it unless the group is that large already
   * (grown before a crash), and reports `groupGrown`; after that it is never set again.
   */
  const capacityFirst = (old: string, group: string, options: LaunchOptions) =>
    Effect.gen(function* () {
      const growth = yield* lockOf(group).withPermits(1)(
        Effect.gen(function* () {
          const g = yield* describeGroup(group, old)
          const mine = growths.get(old)
          const recorded = options.previous?.desiredCapacity ?? mine?.target
          const floor = Math.max(g.DesiredCapacity ?? 0, pendingTarget(group, old))
          const plan = growthFor({ ...g, DesiredCapacity: floor }, old, recorded)
          if (plan.kind === "full") return yield* notRetryable("SetDesiredCapacity", plan.message)
          if (plan.kind === "grow") {
            growths.set(old, {
              group,
              before: membersOf(g.Instances),
              atMs: yield* Clock.currentTimeMillis,
              target: plan.target,
              applied: false
            })
            return { target: plan.target, grown: false, members: undefined }
          }
          const applied = options.previous?.groupGrown === true || mine?.applied === true
          if (applied) return { target: plan.target, grown: true, members: g.Instances }
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
          growths.set(old, {
            group,
            before: mine?.before ?? membersOf(g.Instances),
            atMs: mine?.atMs ?? (yield* Clock.currentTimeMillis),
            target: plan.target,
            applied: true
          })
          return { target: plan.target, grown: true, members: undefined }
        })
      )
      const asked: Replacement = {
        autoScalingGroup: group,
        desiredCapacity: growth.target,
        groupGrown: growth.grown
      }
      // Just planned or just grown: the group launches within seconds; a later ask finds the member.
      if (growth.members === undefined) return asked
      const since = options.requestedAtMs ?? growths.get(old)?.atMs
      const candidates = replacementCandidates(growth.members, {
        old,
        before: growths.get(old)?.before,
        claimed: claimedByOthers(old),
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
      const claimed = { ...asked, ...replacement }
      claims.set(old, claimed)
      return claimed
    })

  const removeFirst = (old: string, group: string, options: LaunchOptions) =>
    Effect.gen(function* () {
      const g = yield* describeGroup(group, old)
      const gone = yield* instances.describe(old)
      const terminatedAtMs = terminatedAt(gone?.StateTransitionReason)
      const search = {
        old,
        before: terminations.get(old),
        claimed: claimedByOthers(old),
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
      const claimed = { ...replacement, autoScalingGroup: group }
      claims.set(old, claimed)
      return claimed
    })

  const replacement = (node: NodeRef, old: AwsInstanceRef, group: string, options: LaunchOptions) =>
    Effect.gen(function* () {
      const id = old.instanceId
      const known = claims.get(id) ?? (options.previous?.instanceId ? options.previous : undefined)
      if (known) {
        claims.set(id, known)
        return yield* refreshed(id, known)
      }
      const r = options.capacityFirst
        ? yield* capacityFirst(id, group, options)
        : yield* removeFirst(id, group, options)
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

  return { terminate, replacement }
}
