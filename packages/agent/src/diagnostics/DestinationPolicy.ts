/**
 * Where a log bundle may go. Whoever can create a NodeDiagnostic must not be able to make the agent send node
 * logs (or any request) somewhere the operator did not name: `node` is always allowed; a URL only when it
 * falls under an entry of the agent's allowlist (config/destination-allowlist.ts), which is empty by default.
 * Link-local and cloud-metadata addresses are refused in every notation, whatever the allowlist says; so are
 * credentials in the URL, schemes other than https (http only under a loopback test entry), ports the entry
 * does not name and encoded slashes. Pure: no I/O, no DNS (Delivery checks resolved addresses).
 */
import {
  ALLOWLIST_FIELD,
  type AllowedDestination,
  classifyHost,
  compileAllowlist,
  s3Location
} from "../config/destination-allowlist.ts"
import { NODE_DESTINATION } from "@nodemend/kube-access/NodeDiagnostic"

export {
  ALLOWLIST_FIELD,
  type AllowedDestination,
  classifyHost,
  compileAllowlist,
  DEFAULT_DESTINATION_ALLOWLIST,
  parseAllowedDestination,
  parseAllowlist,
  s3Location
} from "../config/destination-allowlist.ts"

export type Destination = { readonly _tag: "Node" } | { readonly _tag: "Url"; readonly url: URL }

export type DestinationDecision =
  | { readonly _tag: "Allowed"; readonly destination: Destination }
  | { readonly _tag: "Refused"; readonly reason: string }

/** Shows a URL without its query (presigned URLs carry a signature there) for messages and logs. */
export const describeUrl = (url: URL): string => `${url.protocol}//${url.host}${url.pathname}`

const underPrefix = (path: string, prefix: string) =>
  prefix.endsWith("/") ? path.startsWith(prefix) : path === prefix || path.startsWith(`${prefix}/`)

const effectivePort = (url: URL) => (url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80")

export const decideDestination = (
  destination: string,
  allowlist: ReadonlyArray<string | AllowedDestination>
): DestinationDecision => {
  if (destination === NODE_DESTINATION) return { _tag: "Allowed", destination: { _tag: "Node" } }
  const refuse = (reason: string): DestinationDecision => ({ _tag: "Refused", reason })
  let url: URL
  try {
    url = new URL(destination)
  } catch {
    return refuse(`destination is neither "node" nor a URL`)
  }
  if (url.username !== "" || url.password !== "") return refuse("destination URL must not carry credentials")
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return refuse(`destination URL must be https (got ${url.protocol.replace(":", "")})`)
  const host = url.hostname.toLowerCase().replace(/\.$/, "")
  if (classifyHost(host) === "forbidden")
    return refuse(`destination host ${url.hostname} is a link-local or cloud metadata address`)
  const entries = allowlist.map((e) => (typeof e === "string" ? compileAllowlist([e])[0]! : e))
  if (entries.length === 0)
    return refuse(
      `destination host ${url.hostname} is not in the agent's allowlist (${ALLOWLIST_FIELD} is empty: only "node" is allowed)`
    )
  if (/%2f|%5c/i.test(url.pathname)) return refuse("destination URL path must not contain encoded slashes")
  const s3 = s3Location(url)
  const sameHost = entries.filter((e) =>
    e._tag === "S3Bucket" ? s3 !== undefined && s3.bucket === e.bucket : e.hostname === host
  )
  if (sameHost.length === 0)
    return refuse(
      s3
        ? `destination bucket ${s3.bucket} is not in the agent's allowlist`
        : `destination host ${url.hostname} is not in the agent's allowlist`
    )
  const protocolOk = sameHost.filter((e) =>
    e._tag === "S3Bucket" ? url.protocol === "https:" : e.protocol === url.protocol
  )
  if (protocolOk.length === 0)
    return refuse(
      url.protocol === "http:"
        ? "destination URL must be https (got http)"
        : `destination ${url.hostname} is allowed only over plain http (a loopback test destination)`
    )
  const port = effectivePort(url)
  const portOk = protocolOk.filter((e) => (e._tag === "S3Bucket" ? port === "443" : e.port === port))
  if (portOk.length === 0)
    return refuse(
      `destination port ${port} is not allowed for ${url.hostname} (443 only, unless the allowlist names the port)`
    )
  const pathOk = portOk.some((e) =>
    e._tag === "S3Bucket" ? s3!.key.startsWith(e.keyPrefix) : underPrefix(url.pathname, e.pathPrefix)
  )
  if (!pathOk) return refuse(`destination ${describeUrl(url)} is not under a prefix in the agent's allowlist`)
  return { _tag: "Allowed", destination: { _tag: "Url", url } }
}
