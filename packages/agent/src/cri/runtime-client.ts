/**
 * The CRI RuntimeService calls the agent makes, over the runtime's unix socket (containerd:
 * `<host-root>/run/containerd/containerd.sock`). A sandbox the runtime does not know (grpc-status
 * NOT_FOUND) is an answer, not an error: it reads as `undefined`.
 */
import { Effect } from "effect"
import { GRPC_NOT_FOUND, type GrpcError, GrpcProtocolError, withGrpcConnection } from "./grpc-unix.ts"
import {
  decodePodSandboxStatusResponse,
  encodePodSandboxStatusRequest,
  POD_SANDBOX_STATUS_METHOD,
  type PodSandboxStatus
} from "./pod-sandbox-status.ts"

export const CONTAINERD_SOCKET = "run/containerd/containerd.sock"
export const DEFAULT_CRI_TIMEOUT_MS = 5_000

export interface CriRuntimeClient {
  /** The runtime's socket path on this machine. */
  readonly socket: string
  /** Statuses of the given sandboxes over one connection, in order; `undefined` for an unknown sandbox. */
  readonly podSandboxStatuses: (
    ids: readonly string[]
  ) => Effect.Effect<ReadonlyMap<string, PodSandboxStatus | undefined>, GrpcError>
}

export const criRuntimeClient = (socket: string, timeoutMs = DEFAULT_CRI_TIMEOUT_MS): CriRuntimeClient => ({
  socket,
  podSandboxStatuses: (ids) =>
    ids.length === 0
      ? Effect.succeed(new Map())
      : withGrpcConnection(socket, timeoutMs, (conn) =>
          Effect.gen(function* () {
            const out = new Map<string, PodSandboxStatus | undefined>()
            for (const id of ids) {
              const answer = yield* conn
                .unary(
                  POD_SANDBOX_STATUS_METHOD,
                  encodePodSandboxStatusRequest({ podSandboxId: id, verbose: false })
                )
                .pipe(
                  Effect.map((bytes) => ({ bytes })),
                  Effect.catchTag("GrpcStatusError", (e) =>
                    e.code === GRPC_NOT_FOUND ? Effect.succeed(undefined) : Effect.fail(e)
                  )
                )
              if (answer === undefined) {
                out.set(id, undefined)
                continue
              }
              const status = yield* Effect.try({
                try: () => decodePodSandboxStatusResponse(answer.bytes).status,
                catch: (e) =>
                  new GrpcProtocolError({ method: POD_SANDBOX_STATUS_METHOD, detail: (e as Error).message })
              })
              out.set(id, status)
            }
            return out
          })
        )
})
