// What marks this test run's objects, and the errors of its client calls: shared by the helpers in index.ts,
// karpenter.ts and nodeIdentity.ts, which import it here rather than from index.ts (index.ts re-exports them all).
import { randomBytes } from "node:crypto"
import { ApiException } from "@kubernetes/client-node"

/** Every object created through these helpers carries this label with the run id. */
export const TEST_RUN_LABEL = "nodemend.io/test-run"
export const RUN_ID: string = `${process.pid.toString(36)}${randomBytes(2).toString("hex")}`

/** A DNS-1123 name unique to this run: `<prefix>-<run>-<random>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${RUN_ID}-${randomBytes(3).toString("hex")}`.toLowerCase().slice(0, 63)
}

/** HTTP status of a failed client-node call (ApiException or Watch error), else undefined. */
export function errorCode(e: unknown): number | undefined {
  if (e instanceof ApiException) return e.code
  const w = e as { statusCode?: unknown } | null
  return w && typeof w.statusCode === "number" ? w.statusCode : undefined
}
