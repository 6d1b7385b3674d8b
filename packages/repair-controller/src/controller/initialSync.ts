/**
 * The informer's first list at start, retried until it succeeds. An API server that is down, restarting or
 * still behind its load balancer when the controller starts is normal (a control-plane upgrade, a cold
 * cluster): exiting would only crash-loop into a growing CrashLoopBackOff and log less. Meanwhile /readyz
 * stays 503 (not synced) and `initial_node_list_failures_total{code}` plus one log line per attempt say why.
 */
import { Data, Duration, Effect, Metric, Schedule } from "effect"
import { HttpStatusError } from "../kube/KubeHttp.ts"
import { initialNodeListFailures } from "../observability/metrics.ts"

/** The first Node list failed. `code`: the HTTP status, undefined when there was no answer at all. */
export class InitialListFailed extends Data.TaggedError("InitialListFailed")<{
  readonly code: number | undefined
  readonly message: string
}> {}

export const initialListFailed = (e: unknown): InitialListFailed =>
  new InitialListFailed({
    code: e instanceof HttpStatusError ? e.statusCode : undefined,
    message: `initial node list: ${e instanceof Error ? e.message : String(e)}`
  })

/**
 * Failures no retry can cure, so the process exits with the reason: 400, the request itself is wrong (our
 * nodeSelector does not parse); 404, the server has no Node API at that URL (a wrong server address).
 * 401/403 are retried: credentials rotate (a projected service-account token, an exec plugin's token, a
 * client certificate renewed by cert-manager, RBAC applied after the Deployment), and a replica that waits
 * picks the new ones up on its next attempt where an exited one would be crash-looping. They are logged as
 * errors so a real misconfiguration is still plain.
 */
export const isFatalListFailure = (e: InitialListFailed): boolean => e.code === 400 || e.code === 404

export const INITIAL_LIST_BASE = Duration.seconds(1)
export const INITIAL_LIST_CAP = Duration.seconds(30)

/**
 * Exponential from 1 s, doubling, each delay jittered by 0.8-1.2 (replicas restarted together do not retry in
 * step), capped at 30 s: the jitter sits inside the cap, so no delay exceeds it.
 */
export const initialListSchedule = Schedule.min([
  Schedule.exponential(INITIAL_LIST_BASE, 2).pipe(Schedule.jittered),
  Schedule.spaced(INITIAL_LIST_CAP)
]).pipe(
  Schedule.setInputType<InitialListFailed>(),
  Schedule.while(({ input }) => !isFatalListFailure(input)),
  Schedule.tap(({ input, duration, attempt }) => {
    const detail = {
      code: input.code ?? "none",
      attempt,
      retryInSeconds: Math.round(Duration.toMillis(duration)) / 1000,
      error: input.message
    }
    return input.code === 401 || input.code === 403
      ? Effect.logError(
          "the API server rejected the controller's credentials on the initial node list; retrying (credentials may be rotating)",
          detail
        )
      : Effect.logWarning("initial node list failed; retrying", detail)
  })
)

/** Runs `attempt` (the informer's first list) until it succeeds; fails only on a fatal error. */
export const retryInitialList = <R>(
  attempt: Effect.Effect<void, InitialListFailed, R>
): Effect.Effect<void, InitialListFailed, R> =>
  attempt.pipe(
    Effect.tapError((e) =>
      Metric.update(Metric.withAttributes(initialNodeListFailures, { code: String(e.code ?? "none") }), 1)
    ),
    Effect.retry(initialListSchedule)
  )
