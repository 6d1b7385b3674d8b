import { ApiException } from "@kubernetes/client-node"
import { Data } from "effect"

/** A failed Kubernetes API call. `code` is the HTTP status when there was one. */
export class KubeError extends Data.TaggedError("KubeError")<{
  readonly operation: string
  readonly code: number | undefined
  readonly reason: string | undefined
  readonly message: string
}> {}

export const toKubeError = (operation: string, e: unknown): KubeError => {
  if (e instanceof ApiException) {
    let status: { reason?: string; message?: string } = {}
    if (typeof e.body === "string") {
      try {
        status = JSON.parse(e.body) as typeof status
      } catch {
        status = { message: e.body }
      }
    }
    return new KubeError({
      operation,
      code: e.code,
      reason: status.reason,
      message: `${operation}: HTTP ${e.code} ${status.message ?? ""}`.trim()
    })
  }
  const code = (e as { statusCode?: unknown } | null)?.statusCode
  return new KubeError({
    operation,
    code: typeof code === "number" ? code : undefined,
    reason: undefined,
    message: `${operation}: ${e instanceof Error ? e.message : String(e)}`
  })
}
