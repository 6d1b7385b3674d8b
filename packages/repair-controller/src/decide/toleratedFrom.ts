/**
 * When a toleration starts (decide/toleration.ts): the later of a condition's lastTransitionTime and the
 * controller's first sight of it, never before the Node's creationTimestamp. Its own module: policyMatch.ts takes
 * it for each match and toleration.ts reads the matches. Pure.
 */
import type { ConditionView } from "../domain/NodeView.ts"

/**
 * How far a lastTransitionTime may lie after the controller's first sight of it and still count: a write is seen
 * after it is made, so only the writer's clock running ahead puts it later; NTP keeps clocks within milliseconds, a
 * minute absorbs a badly kept one.
 */
export const MAX_CLOCK_SKEW_MS = 60_000

/** When a condition's toleration starts (epoch ms); undefined without a lastTransitionTime (it never expires). */
export const toleratedFrom = (c: ConditionView, createdAt: number | undefined): number | undefined => {
  if (c.lastTransitionTime === undefined) return undefined
  const seen = c.firstSeen
  const written =
    seen === undefined ? c.lastTransitionTime : Math.min(c.lastTransitionTime, seen + MAX_CLOCK_SKEW_MS)
  return Math.max(written, seen ?? written, createdAt ?? written)
}
