/**
 * The kwok adapter of the owner port: the "machine" is a kwok Node the kwok provider creates and deletes
 * (cloud/kwok), so the replacement is known by its Node name from the start.
 */
import { cloudMachineOwner } from "./cloudMachine.ts"
import type { MachineOwner, OwnerPorts } from "./MachineOwner.ts"

export const kwokOwner = (ports: OwnerPorts): MachineOwner =>
  cloudMachineOwner(ports, {
    name: () => "the kwok provider",
    launch: ports.cloud.launchReplacement,
    requested: (rep) => `replacement ${rep.nodeName ?? rep.instanceId ?? "?"} requested`
  })
