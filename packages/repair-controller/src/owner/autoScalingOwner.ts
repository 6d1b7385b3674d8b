/**
 * The Auto Scaling adapter of the owner port: the member is removed and replaced through its group, never with
 * RunInstances (the AWS provider's AutoScalingGroups.ts grows the group by one for a capacity-first repair and
 * shrinks it back when the old member goes).
 */
import { Effect } from "effect"
import { CloudError } from "../cloud/CloudProvider.ts"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import { cloudMachineOwner } from "./cloudMachine.ts"
import type { MachineOwner, OwnerPorts } from "./MachineOwner.ts"

const groupOf = (r: RepairRecord) =>
  r.node.instance.owner.kind === "autoScaling" ? r.node.instance.owner.group : "?"

export const autoScalingOwner = (ports: OwnerPorts): MachineOwner =>
  cloudMachineOwner(ports, {
    name: (r) => `Auto Scaling group ${groupOf(r)}`,
    launch: (node, options) =>
      ports.cloud.autoScaling?.launchReplacement(node, options) ??
      Effect.fail(
        new CloudError({
          operation: "launchReplacement",
          message: `cloud provider ${ports.cloud.name} has no Auto Scaling groups`,
          retryable: false
        })
      ),
    // While the group grows, the member it launches for us is not known yet.
    requested: (rep) =>
      `replacement ${rep.nodeName ?? rep.instanceId ?? `in Auto Scaling group ${rep.autoScalingGroup ?? "?"}`} requested`
  })
