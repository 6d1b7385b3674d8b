import { Data } from "effect"

/** A failed Kubernetes API call. `code` is the HTTP status when there was one; `reason` the Status reason. */
export class KubeError extends Data.TaggedError("KubeError")<{
  readonly operation: string
  readonly code: number | undefined
  readonly reason: string | undefined
  readonly message: string
}> {}

/** A non-2xx answer: the API server's Status (`reason`, `message`) when the body is one. */
export const httpKubeError = (operation: string, code: number, body: string): KubeError => {
  let status: { reason?: unknown; message?: unknown } = {}
  try {
    status = JSON.parse(body) as typeof status
  } catch {
    status = { message: body.slice(0, 500) }
  }
  return new KubeError({
    operation,
    code,
    reason: typeof status.reason === "string" ? status.reason : undefined,
    message: `${operation}: HTTP ${code} ${typeof status.message === "string" ? status.message : ""}`.trim()
  })
}

/** No HTTP answer at all (connection refused, TLS, timeout, credential plugin). */
export const transportKubeError = (operation: string, e: unknown): KubeError =>
  new KubeError({
    operation,
    code: undefined,
    reason: undefined,
    message: `${operation}: ${e instanceof Error ? e.message : String(e)}`
  })
