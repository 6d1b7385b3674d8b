/**
 * The Auto Scaling adapter of the owner port: the member is removed and replaced through its group, never with
 * RunInstances (the AWS provider's AutoScalingGroups.ts grows the group by one for a capacity-first repair and
 * shrinks it back when the old member goes). Everything the group's repairs need to resume is in their records
 * (#25): this adapter hands the provider the repair's own (`previous`, `removedFromGroup`) and what the other
 * repairs of the group hold, read from theirs, and has the group's members journaled before a remove-first
 * termination.
 */
import { Effect } from "effect"
import { CloudError, type GroupRepair } from "../cloud/CloudProvider.ts"
import { isTerminal, type RepairRecord } from "../domain/RepairRecord.ts"
import { refOf } from "../kube/stepPorts.ts"
import { cloudMachineOwner, replacedFirst } from "./cloudMachine.ts"
import type { MachineOwner, OwnerPorts } from "./MachineOwner.ts"

const groupOf = (r: RepairRecord) =>
  r.node.instance.owner.kind === "autoScaling" ? r.node.instance.owner.group : "?"

/** The other repairs of `r`'s group, from the journal's records (the cross-repair view, derived every time). */
export const groupRepairs = (
  records: ReadonlyArray<RepairRecord>,
  r: RepairRecord
): ReadonlyArray<GroupRepair> =>
  records.flatMap((o) =>
    o.id !== r.id &&
    o.node.instance.owner.kind === "autoScaling" &&
    o.node.instance.owner.group === groupOf(r)
      ? [{ replaces: o.node.instance.instanceId, replacement: o.replacement, ended: isTerminal(o) }]
      : []
  )

const noGroups = (name: string) =>
  new CloudError({
    operation: "launchReplacement",
    message: `cloud provider ${name} has no Auto Scaling groups`,
    retryable: false
  })

export const autoScalingOwner = (ports: OwnerPorts): MachineOwner =>
  cloudMachineOwner(ports, {
    name: (r) => `Auto Scaling group ${groupOf(r)}`,
    launch: (node, options, r) =>
      ports.cloud.autoScaling?.launchReplacement(node, groupOf(r), {
        ...options,
        ...(r.removedFromGroup !== undefined ? { membersBefore: r.removedFromGroup.membersBefore } : {}),
        others: () => groupRepairs(ports.repairs(), r)
      }) ?? Effect.fail(noGroups(ports.cloud.name)),
    // While the group grows, the member it launches for us is not known yet.
    requested: (rep) =>
      `replacement ${rep.nodeName ?? rep.instanceId ?? `in Auto Scaling group ${rep.autoScalingGroup ?? "?"}`} requested`,
    // Remove first (the group launches the replacement): its members now are journaled before the termination, so
    // the member it launches is told from them, also after a restart.
    beforeRemoval: (r) =>
      Effect.gen(function* () {
        const port = ports.cloud.autoScaling
        if (replacedFirst(r) || r.removedFromGroup !== undefined || port === undefined) return undefined
        const before = yield* port.membersBeforeRemoval(refOf(r))
        return before === undefined
          ? undefined
          : { _tag: "RemovalRecorded" as const, group: before.group, membersBefore: before.members }
      })
  })
