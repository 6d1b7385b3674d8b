/**
 * Toleration: a match is due once its toleration has passed since it started. It starts at the later of the
 * condition's lastTransitionTime and the controller's first sight of that status (`firstSeen`), never before the
 * Node's creationTimestamp: a lastTransitionTime is what the node wrote about itself (a node may write its own
 * conditions), so a time in the past (1970) must not skip the toleration, and the controller's sight is kept
 * across restarts (controller/Sightings.ts), so a restart delays nothing it had seen. A lastTransitionTime later
 * than the first sight (the writer's clock ahead) counts up to MAX_CLOCK_SKEW_MS: a broken clock cannot postpone a
 * repair for ever. A condition that clears first simply stops matching (silent reset).
 */
import type { PolicyMatch } from "./policyMatch.ts"

export type TolerationVerdict =
  | { readonly _tag: "Healthy" }
  /** Only report-only (`None`) matches. */
  | { readonly _tag: "ReportOnly"; readonly matches: ReadonlyArray<PolicyMatch> }
  | {
      readonly _tag: "Tolerating"
      readonly governing: PolicyMatch
      readonly requeueAfterMs: number | undefined
    }
  | { readonly _tag: "Expired"; readonly governing: PolicyMatch }

const ACTION_RANK = { Replace: 2, Reboot: 1, None: 0 } as const

/**
 * Picks the governing match: the earliest expiry among actionable matches (ties: Replace before Reboot).
 * Report-only matches never hide an actionable one. A match without lastTransitionTime never expires.
 */
export const tolerationVerdict = (matches: ReadonlyArray<PolicyMatch>, now: number): TolerationVerdict => {
  if (matches.length === 0) return { _tag: "Healthy" }
  const actionable = matches.filter((m) => m.action !== "None")
  if (actionable.length === 0) return { _tag: "ReportOnly", matches }
  const sorted = [...actionable].sort(
    (a, b) =>
      (a.expiresAt ?? Number.POSITIVE_INFINITY) - (b.expiresAt ?? Number.POSITIVE_INFINITY) ||
      ACTION_RANK[b.action] - ACTION_RANK[a.action]
  )
  const governing = sorted[0]!
  if (governing.expiresAt === undefined) return { _tag: "Tolerating", governing, requeueAfterMs: undefined }
  if (now < governing.expiresAt)
    return { _tag: "Tolerating", governing, requeueAfterMs: governing.expiresAt - now }
  return { _tag: "Expired", governing }
}
