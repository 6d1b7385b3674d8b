/**
 * The standalone-EC2 adapter of the owner port: nodemend launches the replacement from the launch template EC2
 * recorded on the old instance (RunInstances with the repair id as ClientToken) and terminates the old one.
 */
import { cloudMachineOwner } from "./cloudMachine.ts"
import type { MachineOwner, OwnerPorts } from "./MachineOwner.ts"

export const launchTemplateOwner = (ports: OwnerPorts): MachineOwner =>
  cloudMachineOwner(ports, {
    name: () => "its launch template",
    launch: ports.cloud.launchReplacement,
    requested: (rep) => `replacement ${rep.nodeName ?? rep.instanceId ?? "?"} requested`
  })
