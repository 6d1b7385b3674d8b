/**
 * Capacity first through an Auto Scaling group, pure: by how much to grow the group for a replacement (once, to an
 * absolute size, never again when the repair already recorded one), which member is that replacement, and whether
 * the group failed to launch it.
 */
import type { Activity, AutoScalingGroup } from "@aws-sdk/client-auto-scaling"
import type { Instance } from "@aws-sdk/client-ec2"

export type Growth =
  /** SetDesiredCapacity to `target` (the group's desired capacity + 1). */
  | { readonly kind: "grow"; readonly target: number }
  /** The repair grew the group already (its record says to what): never again, even after a restart. */
  | { readonly kind: "grown"; readonly target: number }
  /** Growing would pass MaxSize: no replacement through this group now. */
  | { readonly kind: "full"; readonly message: string }

/** How to grow `group` for the replacement of `old`; `grownTo`: the size the repair already grew it to, if any. */
export const growthFor = (
  group: Pick<AutoScalingGroup, "AutoScalingGroupName" | "DesiredCapacity" | "MaxSize">,
  old: string,
  grownTo: number | undefined
): Growth => {
  if (grownTo !== undefined) return { kind: "grown", target: grownTo }
  const desired = group.DesiredCapacity ?? 0
  const max = group.MaxSize ?? 0
  if (desired + 1 > max) {
    return {
      kind: "full",
      message: `Auto Scaling group ${group.AutoScalingGroupName} is at its MaxSize (${max}, desired ${desired}): it cannot grow by one for the replacement of ${old} before ${old} is removed (raise MaxSize, or let the repair remove first)`
    }
  }
  return { kind: "grow", target: desired + 1 }
}

const secondFloor = (ms: number) => Math.floor(ms / 1000) * 1000

/**
 * The replacement among the group's new members as EC2 describes them: the first launched at or after the repair
 * asked (EC2 launch times are whole seconds, so the second it asked in counts).
 */
export const firstLaunchedSince = (
  described: ReadonlyArray<Instance>,
  sinceMs: number | undefined
): Instance | undefined => {
  const at = (i: Instance) => i.LaunchTime?.getTime() ?? 0
  return described
    .filter((i) => sinceMs === undefined || at(i) >= secondFloor(sinceMs))
    .sort((a, b) => at(a) - at(b))[0]
}

/** Why the group could not launch: its newest Failed activity that started at or after `sinceMs`, if any. */
export const launchFailure = (
  activities: ReadonlyArray<Pick<Activity, "StatusCode" | "StatusMessage" | "StartTime" | "Description">>,
  sinceMs: number | undefined
): string | undefined => {
  const failed = activities.find(
    (a) =>
      a.StatusCode === "Failed" &&
      (sinceMs === undefined || (a.StartTime?.getTime() ?? 0) >= secondFloor(sinceMs))
  )
  return failed ? (failed.StatusMessage ?? failed.Description ?? "a launch failed") : undefined
}
