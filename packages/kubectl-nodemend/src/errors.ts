/** An error meant for the user: printed as is, exit code 1. */
export class PluginError extends Error {}

export const k8sCode = (e: unknown): number | undefined => {
  const c =
    (e as { code?: unknown; statusCode?: unknown } | null)?.code ??
    (e as { statusCode?: unknown } | null)?.statusCode
  return typeof c === "number" ? c : undefined
}

/** The API server's message for a failed client-node call, else the error's message. */
export const k8sMessage = (e: unknown): string => {
  const body = (e as { body?: unknown } | null)?.body
  if (typeof body === "string") {
    try {
      const m = (JSON.parse(body) as { message?: string }).message
      if (m) return m
    } catch {
      return body.slice(0, 300)
    }
  }
  return e instanceof Error ? e.message : String(e)
}
