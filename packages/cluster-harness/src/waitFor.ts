// The one polling wait of the tests, the cluster harness and the demo (`@nodemend/cluster-harness/waitFor`: no
// Kubernetes client behind it, so unit tests and the fake cloud's tests can use it too).
import { inspect } from "node:util"

export interface WaitOptions {
  /** Give up after this long (default 30 s). */
  timeoutMs?: number
  /** Pause between two probes (default 200 ms). */
  intervalMs?: number
}

/**
 * Polls `probe` until it returns a value other than `undefined` or `false`, and returns that value, so a test can
 * assert on what it waited for. A probe that throws is tried again. On timeout the error names `description`,
 * how many probes ran, the last value the probe reported through `seen` (what it was looking at: a list of
 * findings, a phase, a count) and the last error it threw.
 */
export async function waitFor<T>(
  description: string,
  probe: (seen: (value: unknown) => void) => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 30_000, intervalMs = 200 }: WaitOptions = {}
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let probes = 0
  let last: { value: unknown } | undefined
  let lastError: unknown
  const seen = (value: unknown) => {
    last = { value }
  }
  for (;;) {
    probes++
    try {
      const v = await probe(seen)
      if (v !== undefined && v !== false) return v
    } catch (e) {
      lastError = e
    }
    if (Date.now() > deadline) {
      const parts = [`timed out after ${timeoutMs} ms (${probes} probes) waiting for ${description}`]
      if (last !== undefined)
        parts.push(`last seen: ${inspect(last.value, { depth: 4, breakLength: Infinity })}`)
      if (lastError !== undefined)
        parts.push(`last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`)
      throw new Error(parts.join("; "))
    }
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}
