import { Effect } from "effect"
export const CONTAINERD_SOCKET = "run/containerd/containerd.sock"
export const criRuntimeClient = (socket: string) => ({
  socket,
  podSandboxStatuses: (_ids: readonly string[]) => Effect.succeed(new Map())
})
