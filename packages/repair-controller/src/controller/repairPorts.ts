/** The ports of a repair's run and start (runRepair.ts, startRepair.ts), apart from them: both import it. */
import type { StepPorts } from "../actions/executeStep.ts"
import type { ControllerEnv } from "./ControllerEnv.ts"
import type { SightingPorts } from "./relapseSighting.ts"
import type { RequestPorts } from "./requestedRepair.ts"

/** What a repair's run uses: its steps' ports and the controller's it reports to (Reconciler.ts picks them). */
export type RunRepairPorts = StepPorts &
  RequestPorts &
  SightingPorts &
  Pick<ControllerEnv, "cache" | "queue" | "drains" | "flushPoolMetrics" | "shifts" | "reboots">

/** Their names, for the Reconciler's `pick`. */
export const RUN_REPAIR_PORTS = [
  "kube",
  "cache",
  "events",
  "logCapture",
  "cloud",
  "config",
  "taintFirst",
  "owners",
  "requests",
  "store",
  "placements",
  "relapse",
  "queue",
  "drains",
  "flushPoolMetrics",
  "shifts",
  "reboots"
] as const satisfies ReadonlyArray<keyof RunRepairPorts>
