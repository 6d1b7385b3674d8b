/**
 * Where a log bundle may go. A NodeDiagnostic author must not be able to make the agent send node logs (or
 * any request) to a host of their choosing, so a URL destination has to be https, carry no credentials in
 * the authority, and name a host in the allowlist. Plain http is accepted only for loopback hosts (tests).
 * Pure: no I/O, no DNS.
 */
import { NODE_DESTINATION } from "./NodeDiagnostic.ts"

/**
 * Host patterns of S3 presigned URLs (virtual-hosted and path style, regional, legacy `s3-<region>`,
 * dual-stack, FIPS, China). `*` at the start matches one or more labels (bucket names may contain dots);
 * `*` elsewhere matches within one label.
 */
export const DEFAULT_DESTINATION_ALLOWLIST: ReadonlyArray<string> = [
  "s3.amazonaws.com",
  "*.s3.amazonaws.com",
  "s3.*.amazonaws.com",
  "*.s3.*.amazonaws.com",
  "s3-*.amazonaws.com",
  "*.s3-*.amazonaws.com",
  "s3.dualstack.*.amazonaws.com",
  "*.s3.dualstack.*.amazonaws.com",
  "s3-fips.*.amazonaws.com",
  "*.s3-fips.*.amazonaws.com",
  "s3.*.amazonaws.com.cn",
  "*.s3.*.amazonaws.com.cn"
]

export type Destination = { readonly _tag: "Node" } | { readonly _tag: "Url"; readonly url: URL }

export type DestinationDecision =
  | { readonly _tag: "Allowed"; readonly destination: Destination }
  | { readonly _tag: "Refused"; readonly reason: string }

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"])

const escapeRegex = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")

/** Compiles one allowlist pattern into an anchored, case-insensitive RegExp over a hostname. */
export const compileHostPattern = (pattern: string): RegExp => {
  const p = pattern.trim().toLowerCase()
  let body = ""
  let rest = p
  if (rest.startsWith("*.")) {
    body = "(?:[a-z0-9-]+\\.)+"
    rest = rest.slice(2)
  }
  body += rest.split("*").map(escapeRegex).join("[a-z0-9-]+")
  return new RegExp(`^${body}$`)
}

export const hostAllowed = (hostname: string, allowlist: ReadonlyArray<string>): boolean => {
  const host = hostname.toLowerCase().replace(/\.$/, "")
  return allowlist.some((p) => compileHostPattern(p).test(host))
}

/** Shows a URL without its query (presigned URLs carry a signature there) for messages and logs. */
export const describeUrl = (url: URL): string => `${url.protocol}//${url.host}${url.pathname}`

export const decideDestination = (
  destination: string,
  allowlist: ReadonlyArray<string>
): DestinationDecision => {
  if (destination === NODE_DESTINATION) return { _tag: "Allowed", destination: { _tag: "Node" } }
  let url: URL
  try {
    url = new URL(destination)
  } catch {
    return { _tag: "Refused", reason: `destination is neither "node" nor a URL` }
  }
  if (url.username !== "" || url.password !== "") {
    return { _tag: "Refused", reason: "destination URL must not carry credentials" }
  }
  const loopback = LOOPBACK_HOSTS.has(url.hostname.toLowerCase())
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    return { _tag: "Refused", reason: `destination URL must be https (got ${url.protocol.replace(":", "")})` }
  }
  if (!hostAllowed(url.hostname, allowlist)) {
    return { _tag: "Refused", reason: `destination host ${url.hostname} is not in the agent's allowlist` }
  }
  return { _tag: "Allowed", destination: { _tag: "Url", url } }
}
