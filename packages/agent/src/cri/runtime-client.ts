/**
 * The CRI RuntimeService calls the agent makes, over the runtime's unix socket (containerd:
 * `<host-root>/run/containerd/containerd.sock`). A sandbox the runtime does not know (grpc-status
 * NOT_FOUND) is an answer, not an error: it reads as `undefined`.
 */
import { Effect } from "effect"
import {
  GRPC_NOT_FOUND,
  type GrpcConnection,
  type GrpcError,
  GrpcProtocolError,
  GrpcTimeout,
  withGrpcConnection
} from "./grpc-unix.ts"
import {
  decodePodSandboxStatusResponse,
  encodePodSandboxStatusRequest,
  POD_SANDBOX_STATUS_METHOD,
  type PodSandboxStatus
} from "./pod-sandbox-status.ts"
import {
  decodeStatusResponse,
  encodeListPodSandboxRequest,
  encodeStatusRequest,
  LIST_POD_SANDBOX_METHOD,
  type RuntimeCondition,
  STATUS_METHOD
} from "./runtime-health.ts"

export const CONTAINERD_SOCKET = "run/containerd/containerd.sock"
export const DEFAULT_CRI_TIMEOUT_MS = 5_000
/** A whole batch ends within this, however many sandboxes it asks about: it runs on the shared check queue. */
export const DEFAULT_CRI_BATCH_TIMEOUT_MS = 15_000
/** Calls in flight at once on the one HTTP/2 connection. */
const CONCURRENCY = 8

export interface CriRuntimeClient {
  /** The runtime's socket path on this machine. */
  readonly socket: string
  /** Statuses of the given sandboxes over one connection; `undefined` for an unknown sandbox. */
  readonly podSandboxStatuses: (
    ids: readonly string[]
  ) => Effect.Effect<ReadonlyMap<string, PodSandboxStatus | undefined>, GrpcError>
  /**
   * The health probe: `Status` (the runtime's conditions), then `ListPodSandbox` (what `crictl pods` calls;
   * its answer is only awaited, not decoded), over one connection, both within twice `timeoutMs` (10 s; node-problem-detector's
   * health-checker gives crictl 60 s, but a probe here holds the checks' shared queue).
   */
  readonly probe: () => Effect.Effect<readonly RuntimeCondition[], GrpcError>
}

const statusOf = (conn: GrpcConnection, id: string): Effect.Effect<PodSandboxStatus | undefined, GrpcError> =>
  conn
    .unary(POD_SANDBOX_STATUS_METHOD, encodePodSandboxStatusRequest({ podSandboxId: id, verbose: false }))
    .pipe(
      Effect.flatMap((bytes) =>
        Effect.try({
          try: () => decodePodSandboxStatusResponse(bytes).status,
          catch: (e) =>
            new GrpcProtocolError({ method: POD_SANDBOX_STATUS_METHOD, detail: (e as Error).message })
        })
      ),
      Effect.catchTag("GrpcStatusError", (e) =>
        e.code === GRPC_NOT_FOUND ? Effect.succeed(undefined) : Effect.fail(e)
      )
    )

export const criRuntimeClient = (
  socket: string,
  timeoutMs = DEFAULT_CRI_TIMEOUT_MS,
  batchTimeoutMs = DEFAULT_CRI_BATCH_TIMEOUT_MS
): CriRuntimeClient => ({
  socket,
  podSandboxStatuses: (ids) =>
    ids.length === 0
      ? Effect.succeed(new Map())
      : withGrpcConnection(socket, timeoutMs, (conn) =>
          Effect.forEach(ids, (id) => Effect.map(statusOf(conn, id), (s) => [id, s] as const), {
            concurrency: CONCURRENCY
          }).pipe(Effect.map((pairs) => new Map(pairs)))
        ).pipe(
          Effect.timeoutOrElse({
            duration: batchTimeoutMs,
            orElse: () =>
              Effect.fail(new GrpcTimeout({ method: POD_SANDBOX_STATUS_METHOD, timeoutMs: batchTimeoutMs }))
          })
        ),
  probe: () =>
    withGrpcConnection(socket, timeoutMs, (conn) =>
      Effect.gen(function* () {
        const bytes = yield* conn.unary(STATUS_METHOD, encodeStatusRequest(false))
        const conditions = yield* Effect.try({
          try: () => decodeStatusResponse(bytes),
          catch: (e) => new GrpcProtocolError({ method: STATUS_METHOD, detail: (e as Error).message })
        })
        yield* conn.unary(LIST_POD_SANDBOX_METHOD, encodeListPodSandboxRequest())
        return conditions
      })
    ).pipe(
      Effect.timeoutOrElse({
        duration: 2 * timeoutMs,
        orElse: () => Effect.fail(new GrpcTimeout({ method: STATUS_METHOD, timeoutMs: 2 * timeoutMs }))
      })
    )
})
