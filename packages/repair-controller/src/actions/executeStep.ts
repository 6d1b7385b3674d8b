/**
 * Carries out one state-machine action against the cluster and the cloud. Every step observes before it
 * mutates, so it is safe to repeat after a crash: the taint is checked, the instance is described before
 * terminate, launches are idempotent on the repair id.
 */
import { Effect } from "effect"
import type { CloudError, InstanceMismatch, InvalidProviderID } from "../cloud/CloudProvider.ts"
import type { ActionEnv } from "./ActionEnv.ts"
import type { KubeError, ListExpired } from "@nodemend/kube-access"
import type { RepairRecord } from "../domain/RepairRecord.ts"
import type { Action } from "../repair/stateMachine.ts"
import { captureLogs } from "./captureLogs.ts"
import { drain } from "./drain.ts"
import * as instance from "./instance.ts"
import * as karpenter from "./karpenter.ts"
import { type Outcome, wait } from "./step.ts"
import { taint, untaint } from "./taint.ts"

export type StepFailure = KubeError | ListExpired | CloudError | InvalidProviderID | InstanceMismatch

export const executeStep = (
  env: ActionEnv,
  r: RepairRecord,
  action: Action
): Effect.Effect<Outcome, StepFailure> => {
  const viaKarpenter = r.node.instance.owner.kind === "karpenter"
  switch (action._tag) {
    case "Taint":
      return taint(env, r)
    case "Drain":
      return drain(env, r, action.deadlinePassed, false)
    case "ForceDrain":
      return drain(env, r, true, true)
    case "CaptureLogs":
      return captureLogs(env, r, action.timeoutMs)
    case "Reboot":
      return instance.reboot(env, r)
    case "AwaitReboot":
      return instance.awaitReboot(env, r, action.settledAt, action.timesOutAt)
    case "Terminate":
      return viaKarpenter ? karpenter.terminate(env, r) : instance.terminate(env, r)
    case "AwaitInstanceGone":
      return viaKarpenter ? karpenter.awaitInstanceGone(env, r) : instance.awaitInstanceGone(env, r)
    case "DeleteNode":
      return viaKarpenter ? karpenter.awaitNodeRemoved(env, r) : instance.deleteNode(env, r)
    case "LaunchReplacement":
      return viaKarpenter ? karpenter.launchReplacement(env, r) : instance.launchReplacement(env, r)
    case "AwaitReplacement":
      return viaKarpenter
        ? karpenter.awaitReplacement(env, r, action.timesOutAt)
        : instance.awaitReplacement(env, r, action.timesOutAt)
    case "Untaint":
      return untaint(env, r)
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
