/**
 * Per-node escalation across repairs: a node rebooted for a fault that comes back within a window is replaced the
 * next time (medik8s' escalating remediations; Karpenter's repair RFCs). Within one repair a reboot that does not
 * heal already becomes a Replace (repair/stateMachine.ts); this is the reboot that healed, for a while.
 *
 * The rule: the node's due repair would be a Reboot; its last Reboot repair for the same condition type (any reason:
 * the condition type is the subsystem, and a reboot after which it fails again within the window did not heal the
 * machine, whatever reason it names now) ended at T; the fault came back at C (the match's `toleratedFrom`: the later
 * of the node's lastTransitionTime and the controller's first sight, so a node cannot move it earlier) with
 * T - 1 s <= C <= T + window: then Replace. The same machine only: the mark's providerID must be the Node's (a Node
 * re-created under its name on the same instance keeps its history, as relapses count it once; another instance
 * under the name, such as a reused private DNS name, starts clean). Pure.
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"
import type { NodeView } from "../domain/NodeView.ts"
import type { RebootMark } from "../domain/Reboots.ts"
import type { PolicyMatch } from "./policyMatch.ts"

/** Kubernetes writes lastTransitionTime in whole seconds: a fault back within the second the repair ended counts. */
const SECOND = 1000

/** The window for a condition type: its policy's `escalationWindowSeconds`, else `escalation.windowSeconds`; 0 off. */
export const escalationWindowMs = (
  config: ControllerConfig,
  conditionType: string,
  status: string
): number => {
  if (!config.escalation.enabled) return 0
  const own = config.policies.find((p) => p.conditionType === conditionType && p.status === status)
  return (own?.escalationWindowSeconds ?? config.escalation.windowSeconds) * 1000
}

/** The longest window of any policy: how long a reboot is worth remembering. */
export const longestWindowMs = (config: ControllerConfig): number =>
  Math.max(
    config.escalation.windowSeconds * 1000,
    ...config.policies.map((p) => (p.escalationWindowSeconds ?? 0) * 1000)
  )

export interface Escalation {
  /** The Reboot repair the fault came back after. */
  readonly rebooted: RebootMark
  /** When it came back (the match's toleratedFrom). */
  readonly cameBackAt: number
  /** From the reboot repair's end to the fault's return. */
  readonly afterMs: number
  readonly windowMs: number
}

/** Why the due repair of `governing` is a Replace instead of a Reboot; undefined when it stays as the policy says. */
export const escalationOf = (
  config: ControllerConfig,
  node: Pick<NodeView, "name" | "providerID">,
  governing: PolicyMatch,
  reboots: ReadonlyArray<RebootMark>
): Escalation | undefined => {
  if (governing.action !== "Reboot" || governing.toleratedFrom === undefined) return undefined
  const windowMs = escalationWindowMs(config, governing.conditionType, governing.status)
  if (windowMs <= 0) return undefined
  const cameBackAt = governing.toleratedFrom
  const mark = reboots.find(
    (m) =>
      m.node === node.name &&
      m.conditionType === governing.conditionType &&
      m.providerID === (node.providerID ?? "") &&
      cameBackAt >= m.at - SECOND &&
      cameBackAt <= m.at + windowMs
  )
  if (mark === undefined) return undefined
  return { rebooted: mark, cameBackAt, afterMs: Math.max(0, cameBackAt - mark.at), windowMs }
}

/** The governing match as the escalated repair carries it out: a Replace, every other knob the policy's. */
export const escalated = (governing: PolicyMatch): PolicyMatch => ({ ...governing, action: "Replace" })

const minutes = (ms: number) => `${Math.round(ms / 60_000)}m`

/** The Event's words: `rebooted for X at T, the fault came back after Nm: replacing`. */
export const escalationText = (e: Escalation, governing: PolicyMatch): string =>
  `rebooted for ${e.rebooted.conditionType} (${e.rebooted.reason}) at ${new Date(e.rebooted.at).toISOString()} (repair ${e.rebooted.repairId}), the fault came back after ${minutes(e.afterMs)} (${governing.conditionType}=${governing.status}, ${governing.reason}), within the escalation window of ${minutes(e.windowMs)}: replacing instead of rebooting`
