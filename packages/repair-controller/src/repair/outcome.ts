/** What a step reports: a Fact for the state machine, or "call me again in this long". Shared by every step. */
import type { Fact } from "./stateMachine.ts"

export type Outcome =
  | { readonly _tag: "Fact"; readonly fact: Fact }
  /** Call again in this long; `fact`, when given, is journaled first (what the step learned while waiting). */
  | { readonly _tag: "Wait"; readonly requeueAfterMs: number; readonly fact?: Fact }

export const fact = (f: Fact): Outcome => ({ _tag: "Fact", fact: f })
export const wait = (ms: number, f?: Fact): Outcome => ({
  _tag: "Wait",
  requeueAfterMs: Math.max(0, ms),
  ...(f !== undefined ? { fact: f } : {})
})
