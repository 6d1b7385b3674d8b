/**
 * Auto Scaling mode, pure: which group member replaced a terminated instance. The group launches the replacement;
 * nodemend only has to tell it apart from the members that were there already, and never report one instance as
 * the replacement of two.
 */
import type { Instance as AutoScalingMember } from "@aws-sdk/client-auto-scaling"
import type { Instance } from "@aws-sdk/client-ec2"

export interface ReplacementSearch {
  /** The terminated instance. */
  readonly old: string
  /** The group's members when this controller terminated `old`; undefined when it did not (it has restarted since). */
  readonly before: ReadonlySet<string> | undefined
  /** Instances already reported as the replacement of another. */
  readonly claimed: ReadonlySet<string>
  /** When EC2 says `old` was terminated (terminatedAt), if it says. */
  readonly terminatedAtMs: number | undefined
}

/** EC2's `StateTransitionReason`, e.g. `User initiated (2026-11-30 05:00:00 GMT)`, as epoch ms. */
export const terminatedAt = (reason: string | undefined): number | undefined => {
  const m = /\((\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) GMT\)/.exec(reason ?? "")
  return m ? Date.parse(`${m[1]}T${m[2]}Z`) : undefined
}

const LEAVING = /^(Terminat|Detach|Standby)/

/** Members that may be the replacement: new since `old` was terminated, unclaimed, and not leaving the group. */
export const replacementCandidates = (
  members: ReadonlyArray<Pick<AutoScalingMember, "InstanceId" | "LifecycleState">>,
  search: ReplacementSearch
): ReadonlyArray<string> =>
  members.flatMap((m) =>
    m.InstanceId &&
    m.InstanceId !== search.old &&
    !search.before?.has(m.InstanceId) &&
    !search.claimed.has(m.InstanceId) &&
    !LEAVING.test(m.LifecycleState ?? "")
      ? [m.InstanceId]
      : []
  )

const launchedAt = (i: Instance) => i.LaunchTime?.getTime() ?? 0

/**
 * The newest of the candidates as EC2 describes them. Without our record of the group (controller restarted), only
 * an instance launched after `old` was terminated counts: an older one was there before and replaces nothing.
 */
export const newestReplacement = (
  described: ReadonlyArray<Instance>,
  search: ReplacementSearch
): Instance | undefined => {
  const { before, terminatedAtMs } = search
  const after = (i: Instance) =>
    before !== undefined || terminatedAtMs === undefined || launchedAt(i) >= terminatedAtMs
  return described.filter(after).sort((a, b) => launchedAt(b) - launchedAt(a))[0]
}
