/**
 * A downloaded bundle counts only if it is what the node's agent reported in its own NodeDiagnostic's status
 * (SHA-256 and size). Any agent token can read another node's presigned PUT URL and upload there, but only the
 * node's own agent can write that status (admission policy nodemend-agent-nodediagnostics).
 */
import type { BundleDigest } from "@nodemend/kube-access/NodeDiagnostic"
import { PluginError } from "./errors.ts"

/** The suffix a bundle that failed verification is kept under, so nothing takes it for the node's bundle. */
export const UNTRUSTED_SUFFIX = ".untrusted"

/** A downloaded bundle that is not the one the node's agent reported. */
export class UntrustedBundle extends PluginError {
  readonly node: string
  readonly expected: BundleDigest | undefined
  readonly actual: BundleDigest
  constructor(node: string, expected: BundleDigest | undefined, actual: BundleDigest, keptAs: string) {
    const want = expected
      ? `expected sha256 ${expected.sha256} (${expected.size} bytes)`
      : "the node's agent reported no digest (an agent too old to report one)"
    super(
      `${node}: the downloaded bundle is not the one the node's agent reported: ${want}, got sha256 ${actual.sha256} (${actual.size} bytes); kept aside as ${keptAs}`
    )
    this.node = node
    this.expected = expected
    this.actual = actual
  }
}

/** Whether `actual` is the bundle `expected` describes. Pure. A missing report never matches. */
export const matchesReport = (expected: BundleDigest | undefined, actual: BundleDigest): boolean =>
  expected !== undefined && expected.sha256 === actual.sha256 && expected.size === actual.size

/** How a bundle is described next to its result, so it can be checked again later. */
export const describeDigest = (d: BundleDigest): string => `sha256 ${d.sha256}, ${d.size} bytes`
