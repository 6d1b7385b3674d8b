/**
 * The NVIDIA monitor's polls as checks of the agent's one scheduler (scheduler/scheduler.ts): their first run
 * gets the same startup jitter as every other check and they take their turn in the same sequential queue, so
 * a rollout does not query every node's GPUs at the same moment (fleet-wide synchronized polls disturb NCCL
 * jobs: the EKS agent's lesson, reference section 3.1). A poll emits its findings itself (the monitor's own
 * sink) and returns none to the scheduler.
 */
import { Duration, Effect } from "effect"
import { CheckError, type PeriodicCheck } from "../../scheduler/periodic-check.ts"

/**
 * A native call that never answers (a hung host engine) must not hold every other check of the queue: the poll
 * gives up after this long and the next runs at its turn.
 */
export const NVIDIA_POLL_TIMEOUT_MS = 60_000

export const nvidiaPoll = (
  name: string,
  intervalMs: number,
  body: Effect.Effect<void, { readonly message: string }>
): PeriodicCheck => ({
  name,
  monitor: "nvidia",
  intervalMs,
  run: () =>
    body.pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(Math.min(NVIDIA_POLL_TIMEOUT_MS, intervalMs)),
        orElse: () =>
          Effect.fail({ message: `no answer within ${Math.min(NVIDIA_POLL_TIMEOUT_MS, intervalMs)} ms` })
      }),
      Effect.mapError((e) => new CheckError({ check: name, detail: e.message })),
      Effect.as([])
    )
})
