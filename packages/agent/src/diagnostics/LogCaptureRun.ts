/**
 * One log capture, start to finish: check the destination, collect, deliver, and say how it went as the
 * `completed` state the status will carry. Never throws: every failure becomes a `Failure` outcome.
 */
import { rm } from "node:fs/promises"
import type { Collector, CollectorDefaults } from "./Collectors.ts"
import { type AllowedDestination, decideDestination, describeUrl } from "./DestinationPolicy.ts"
import { deliverToNode, kubeletProxyBundlePath, uploadBundle } from "./Delivery.ts"
import { assembleBundle, ERRORS_FILE } from "./LogBundle.ts"
import {
  type BundleDigest,
  type CaptureReason,
  expandCategories,
  type LogCaptureSpec
} from "@nodemend/kube-access/NodeDiagnostic"

export interface LogCaptureRunOptions {
  readonly nodeName: string
  readonly hostRoot: string
  readonly workDir: string
  /** Allowlist entries (strings as in the config, or already parsed). */
  readonly allowlist: ReadonlyArray<string | AllowedDestination>
  readonly collectors: ReadonlyArray<Collector>
  readonly collectorDefaults?: CollectorDefaults
  readonly captureDeadlineMs: number
  readonly uploadTimeoutMs: number
}

export interface LogCaptureOutcome {
  readonly reason: CaptureReason
  readonly message: string
  /** Set when a bundle was built. */
  readonly collectionMs?: number
  /** Set when the bundle was delivered: what a consumer checks it against. */
  readonly bundle?: BundleDigest
  /** true when a request left the node (an upload was attempted). */
  readonly uploaded: boolean
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e))

export const runLogCapture = async (
  spec: LogCaptureSpec,
  opts: LogCaptureRunOptions,
  signal?: AbortSignal
): Promise<LogCaptureOutcome> => {
  const decision = decideDestination(spec.destination, opts.allowlist)
  if (decision._tag === "Refused") {
    return {
      reason: "Failure",
      message: `refused: ${decision.reason}; nothing was collected or sent`,
      uploaded: false
    }
  }
  let bundlePath: string | undefined
  try {
    const bundle = await assembleBundle({
      nodeName: opts.nodeName,
      hostRoot: opts.hostRoot,
      collectors: opts.collectors,
      categories: expandCategories(spec.categories),
      workDir: opts.workDir,
      deadlineMs: opts.captureDeadlineMs,
      ...(opts.collectorDefaults ? { defaults: opts.collectorDefaults } : {}),
      ...(signal ? { signal } : {})
    })
    bundlePath = bundle.path
    const failed = bundle.errors.map((e) => e.name)
    const withErrors =
      failed.length > 0
        ? ` with ${failed.length} collector error(s): ${failed.join(", ")} (see ${ERRORS_FILE})`
        : ""
    const reason: CaptureReason = failed.length > 0 ? "SuccessWithErrors" : "Success"
    const dest = decision.destination
    if (dest._tag === "Node") {
      await deliverToNode(bundle.path, opts.hostRoot, opts.nodeName)
      return {
        reason,
        message: `bundle kept on the node for 10 minutes at ${kubeletProxyBundlePath(opts.nodeName)}${withErrors}`,
        collectionMs: bundle.collectionMs,
        bundle: bundle.digest,
        uploaded: false
      }
    }
    try {
      const up = await uploadBundle(bundle.path, dest.url, opts.uploadTimeoutMs)
      return {
        reason,
        message: `uploaded ${up.bytes} bytes to ${describeUrl(dest.url)}${withErrors}`,
        collectionMs: bundle.collectionMs,
        bundle: bundle.digest,
        uploaded: true
      }
    } catch (e) {
      return {
        reason: "Failure",
        message: `upload failed: ${errorText(e)}`,
        collectionMs: bundle.collectionMs,
        uploaded: true
      }
    }
  } catch (e) {
    return { reason: "Failure", message: `collection failed: ${errorText(e)}`, uploaded: false }
  } finally {
    if (bundlePath) await rm(bundlePath, { force: true })
  }
}
