/**
 * Carries out one state-machine action against the cluster and the cloud. Every step observes before it
 * mutates, so it is safe to repeat after a crash: the taint is checked, the instance is described before
 * terminate, launches are idempotent on the repair id.
 */
import { Effect } from "effect"
import type { CloudError, InstanceMismatch, InvalidProviderID } from "../cloud/CloudProvider.ts"
import type { KubeError, ListExpired } from "@nodemend/kube-access"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { Owners } from "../owner/Owners.ts"
import { type Outcome, wait } from "../repair/outcome.ts"
import type { Action } from "../repair/stateMachine.ts"
import { type CapturePorts, captureLogs } from "./captureLogs.ts"
import { type DrainPorts, drain } from "./drain.ts"
import { type GatePorts, gateReplacement } from "./replacementGate.ts"
import { awaitReboot, type RebootPorts, reboot } from "./reboot.ts"
import { type TaintPorts, taint, untaint } from "./taint.ts"

export type StepFailure = KubeError | ListExpired | CloudError | InvalidProviderID | InstanceMismatch

/** The ports of every step: Kube, the informer's Nodes, Events, the machine's Owner (time is Effect's Clock). */
export type StepPorts = TaintPorts &
  DrainPorts &
  CapturePorts &
  RebootPorts &
  GatePorts & {
    readonly owners: Owners
  }

export const executeStep = (
  ports: StepPorts,
  r: RepairRecord,
  action: Action
): Effect.Effect<Outcome, StepFailure> => {
  const owner = ports.owners.of(r)
  switch (action._tag) {
    case "Taint":
      return taint(ports, r)
    case "Drain":
      return drain(ports, r, action.deadlinePassed, false)
    case "ForceDrain":
      return drain(ports, r, true, true)
    case "CaptureLogs":
      return captureLogs(ports, r, action.timeoutMs)
    case "Reboot":
      return reboot(ports, r)
    case "AwaitReboot":
      return awaitReboot(ports, r, action.settledAt, action.timesOutAt, owner.cannotReplace)
    case "Terminate":
      return owner.removeMachine(r)
    case "AwaitInstanceGone":
      return owner.awaitMachineGone(r)
    case "DeleteNode":
      return owner.removeNode(r)
    case "LaunchReplacement":
      return owner.addCapacity(r)
    case "AwaitReplacement":
      return owner
        .awaitCapacity(r, action.timesOutAt)
        .pipe(Effect.flatMap((out) => gateReplacement(ports, r, out, action.healthTimesOutAt)))
    case "Untaint":
      return untaint(ports, r)
    case "Done":
      return Effect.succeed(wait(0))
  }
}

/** Whether trying the same step again can help: throttling, 5xx, timeouts, conflicts yes; a refusal no. */
export const stepError = (e: StepFailure): { readonly retryable: boolean; readonly message: string } => {
  switch (e._tag) {
    case "CloudError":
      return { retryable: e.retryable, message: `${e.operation}: ${e.message}` }
    case "InvalidProviderID":
    case "InstanceMismatch":
      return { retryable: false, message: e.message }
    case "ListExpired":
      return { retryable: true, message: e.message }
    case "KubeError":
      return {
        retryable: e.code === undefined || e.code === 409 || e.code === 429 || e.code >= 500,
        message: e.message
      }
  }
}
