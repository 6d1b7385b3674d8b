/**
 * The operator's list of places a log bundle may be uploaded to (config `diagnostics.destinationAllowlist`,
 * empty by default): S3 buckets (`s3://bucket[/prefix]`, any commercial-partition endpoint, port 443 only)
 * and URL prefixes (`https://host[:port][/path]`; a port other than 443 only when named; plain http only to a
 * loopback IP, for tests). Also what the checks need to read a URL's host and an S3 URL's bucket and key the
 * way the network and S3 will. Pure and import-free, and part of the config: the config decoder validates entries
 * with it without loading the diagnostics code (docs/agent-runtime.md: diagnostics load only when enabled), and
 * the diagnostics read it from here (the config is below them: docs/architecture.md, the agent's layers).
 */

/** The config default: no URL destination at all, only `node`. */
export const DEFAULT_DESTINATION_ALLOWLIST: ReadonlyArray<string> = []

/** The config field, named in messages so an operator knows what to change. */
export const ALLOWLIST_FIELD = "diagnostics.destinationAllowlist"

export type AllowedDestination =
  | {
      readonly _tag: "S3Bucket"
      readonly entry: string
      readonly bucket: string
      /** "" (the whole bucket) or a folder ending in "/". */
      readonly keyPrefix: string
    }
  | {
      readonly _tag: "UrlPrefix"
      readonly entry: string
      readonly protocol: "https:" | "http:"
      readonly hostname: string
      /** Effective port ("443" when the entry names none). */
      readonly port: string
      /** A folder ending in "/" ("/" for the whole host), or an exact path. */
      readonly pathPrefix: string
    }

export type Parsed<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly error: string }
const ok = <A>(value: A): Parsed<A> => ({ ok: true, value })
const fail = <A>(error: string): Parsed<A> => ({ ok: false, error })

// ---------------------------------------------------------------------------------------------------------
// Addresses: what the WHATWG URL parser leaves of a host (it already turns 2130706433, 0x7f.1, 0177.0.0.1,
// 127.1, %31%32%37.0.0.1 and full-width digits into 127.0.0.1, and IPv6 into compressed hex).

/** IPv4 dotted quad -> number, or undefined. */
const ipv4 = (host: string): number | undefined => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host)
  if (!m) return undefined
  const parts = m.slice(1).map(Number)
  if (parts.some((p) => p > 255)) return undefined
  return ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!
}

/** IPv6 literal (with or without brackets) -> 8 hextets, or undefined. */
const ipv6 = (host: string): number[] | undefined => {
  let h = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host
  if (!h.includes(":")) return undefined
  h = h.replace(/%.*$/, "")
  const tail: number[] = []
  const dotted = /(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(h)
  if (dotted) {
    const v4 = ipv4(dotted[1]!)
    if (v4 === undefined) return undefined
    tail.push(v4 >>> 16, v4 & 0xffff)
    h = h.slice(0, -dotted[1]!.length)
    if (h.endsWith(":") && !h.endsWith("::")) h = h.slice(0, -1)
  }
  const halves = h.split("::")
  if (halves.length > 2) return undefined
  const hex = (s: string) => (s === "" ? [] : s.split(":"))
  const head = hex(halves[0]!)
  const rest = halves.length === 2 ? hex(halves[1]!) : []
  if ([...head, ...rest].some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined
  const known = head.length + rest.length + tail.length
  if (halves.length === 1 ? known !== 8 : known > 7) return undefined
  const zeros = new Array(8 - known).fill(0)
  return [...head.map((g) => parseInt(g, 16)), ...zeros, ...rest.map((g) => parseInt(g, 16)), ...tail]
}

const inV4 = (a: number, net: number, bits: number) =>
  bits === 0 ? true : a >>> (32 - bits) === net >>> (32 - bits)
const v4 = (s: string) => ipv4(s)!

const FORBIDDEN_V4: ReadonlyArray<readonly [number, number]> = [
  [v4("0.0.0.0"), 8], // "this network"; 0.0.0.0 reaches the local host
  [v4("169.254.0.0"), 16], // link-local: EC2/Azure/GCP/OpenStack metadata 169.254.169.254, ECS 169.254.170.2
  [v4("100.100.100.200"), 32], // Alibaba Cloud metadata
  [v4("192.0.0.192"), 32], // Oracle Cloud legacy metadata
  [v4("224.0.0.0"), 4], // multicast
  [v4("240.0.0.0"), 4] // reserved, broadcast
]
const LOOPBACK_V4: readonly [number, number] = [v4("127.0.0.0"), 8]

/** The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), if any. */
const embeddedV4 = (g: number[]): number | undefined => {
  const low = ((g[6]! << 16) >>> 0) + g[7]!
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zero(0, 5) && (g[5] === 0xffff || g[5] === 0) && low > 1) return low // ::ffff:a.b.c.d, ::a.b.c.d
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return low // 64:ff9b::/96 NAT64
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return low // 64:ff9b:1::/48 local NAT64
  if (g[0] === 0x2002) return ((g[1]! << 16) >>> 0) + g[2]! // 6to4
  return undefined
}

type AddressKind = "loopback" | "forbidden" | "other"

/** What an IP literal (or a name) is. Names other than the few below are "other": DNS is checked on upload. */
export const classifyHost = (hostname: string): AddressKind => {
  const host = hostname.toLowerCase().replace(/\.$/, "")
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback"
  if (METADATA_NAMES.has(host)) return "forbidden"
  const a = ipv4(host)
  if (a !== undefined) {
    if (inV4(a, ...LOOPBACK_V4)) return "loopback"
    return FORBIDDEN_V4.some(([net, bits]) => inV4(a, net, bits)) ? "forbidden" : "other"
  }
  const g = ipv6(host)
  if (g === undefined) return "other"
  if (g.slice(0, 7).every((x) => x === 0)) return g[7] === 1 ? "loopback" : g[7] === 0 ? "forbidden" : "other"
  if ((g[0]! & 0xffc0) === 0xfe80) return "forbidden" // link-local
  if ((g[0]! & 0xff00) === 0xff00) return "forbidden" // multicast
  if (g[0] === 0xfd00 && g[1] === 0x0ec2) return "forbidden" // EC2 IMDS, DNS, NTP over IPv6 (fd00:ec2::/32)
  const inner = embeddedV4(g)
  if (inner !== undefined) {
    if (inV4(inner, ...LOOPBACK_V4)) return "loopback"
    if (FORBIDDEN_V4.some(([net, bits]) => inV4(inner, net, bits))) return "forbidden"
  }
  return "other"
}

const METADATA_NAMES = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
  "instance-data.ec2.internal"
])

const isIpLiteral = (host: string) => ipv4(host) !== undefined || ipv6(host) !== undefined

// ---------------------------------------------------------------------------------------------------------
// S3: which bucket and key an https URL addresses (commercial partition only: GovCloud and China have their
// own bucket namespaces, so a bucket of the same name there may belong to someone else; name those
// endpoints as URL prefixes).

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/
const validBucket = (b: string) =>
  BUCKET.test(b) && !b.includes("..") && !b.includes(".-") && !b.includes("-.") && ipv4(b) === undefined

const REGION = "(?!us-gov-)[a-z]{2,4}(?:-[a-z]+)+-[0-9]{1,2}"
const ENDPOINT = `(?:s3|s3-external-1|s3(?:-fips)?(?:\\.dualstack)?\\.${REGION}|s3-${REGION})`
const VIRTUAL_HOSTED = new RegExp(
  `^([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\\.(?:${ENDPOINT}|s3-accelerate(?:\\.dualstack)?)\\.amazonaws\\.com$`
)
const PATH_STYLE = new RegExp(`^${ENDPOINT}\\.amazonaws\\.com$`)

/** Path-style S3 endpoints of every partition (GovCloud and China too): one host serves every bucket. */
const SHARED_S3_ENDPOINT =
  /^(?:s3|s3-external-1|s3(?:-fips)?(?:\.dualstack)?[.-][a-z]{2,4}(?:-[a-z]+)+-[0-9]{1,2})\.amazonaws\.com(?:\.cn)?$/

/** Shared object-store hosts where the path, not the host, names the bucket. */
const isSharedStorageHost = (host: string) =>
  SHARED_S3_ENDPOINT.test(host) || host === "storage.googleapis.com" || host === "storage.cloud.google.com"

const decodeKey = (s: string): string | undefined => {
  try {
    return decodeURIComponent(s)
  } catch {
    return undefined
  }
}

/** Bucket and key of an S3 URL in the commercial partition, or undefined when the URL is not one. */
export const s3Location = (url: URL): { bucket: string; key: string } | undefined => {
  const host = url.hostname.toLowerCase().replace(/\.$/, "")
  const vh = VIRTUAL_HOSTED.exec(host)
  if (vh) {
    const key = decodeKey(url.pathname.slice(1))
    return key === undefined || !validBucket(vh[1]!) ? undefined : { bucket: vh[1]!, key }
  }
  if (PATH_STYLE.test(host)) {
    const m = /^\/([^/]+)(?:\/(.*))?$/.exec(url.pathname)
    if (!m || !validBucket(m[1]!)) return undefined
    const key = decodeKey(m[2] ?? "")
    return key === undefined ? undefined : { bucket: m[1]!, key }
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------
// Allowlist entries (config).

const asFolder = (p: string) => (p === "" || p.endsWith("/") ? p : `${p}/`)

const ENTRY_FORMAT =
  'expected "s3://<bucket>[/<prefix>]" or an https URL prefix such as "https://uploads.example.com/nodemend/"'

/** Parses one allowlist entry; the error says what is wrong with it (the config decoder names the field). */
export const parseAllowedDestination = (entry: string): Parsed<AllowedDestination> => {
  if (entry !== entry.trim() || /\s/.test(entry)) return fail(`"${entry}" contains whitespace`)
  if (entry.includes("*"))
    return fail(
      `"${entry}": wildcards are not supported (a host pattern such as *.s3.amazonaws.com would let a ` +
        "NodeDiagnostic send node logs to any bucket); name each bucket as s3://<bucket>[/<prefix>]"
    )
  const s3 = /^s3:\/\/([^/]*)(?:\/(.*))?$/i.exec(entry)
  if (s3) {
    const bucket = s3[1]!
    if (!validBucket(bucket))
      return fail(`"${entry}": "${bucket}" is not an S3 bucket name (3-63 characters: a-z, 0-9, "." and "-")`)
    const prefix = (s3[2] ?? "").replace(/^\/+/, "")
    if (prefix.split("/").some((seg) => seg === "." || seg === ".."))
      return fail(`"${entry}": the prefix must not contain "." or ".." segments`)
    return ok({ _tag: "S3Bucket", entry, bucket, keyPrefix: asFolder(prefix) })
  }
  if (!/^https?:\/\//i.test(entry))
    return fail(
      /^[a-z][a-z0-9+.-]*:\/\//i.test(entry)
        ? `"${entry}": ${ENTRY_FORMAT}`
        : `"${entry}": ${ENTRY_FORMAT} (a bare host is not accepted: name the bucket or the URL prefix bundles may go to)`
    )
  let url: URL
  try {
    url = new URL(entry)
  } catch {
    return fail(`"${entry}" is not a URL; ${ENTRY_FORMAT}`)
  }
  if (url.username !== "" || url.password !== "")
    return fail(`"${entry}": an allowlist URL must not carry credentials`)
  if (url.search !== "" || url.hash !== "" || entry.includes("?") || entry.includes("#"))
    return fail(`"${entry}": an allowlist URL must not have a query or fragment`)
  if (/%2f|%5c/i.test(url.pathname)) return fail(`"${entry}": the path must not contain encoded slashes`)
  const hostname = url.hostname.toLowerCase().replace(/\.$/, "")
  const kind = classifyHost(hostname)
  if (kind === "forbidden")
    return fail(`"${entry}": ${hostname} is a link-local or cloud metadata address, never a destination`)
  if (kind === "loopback" && !isIpLiteral(hostname))
    return fail(`"${entry}": name a loopback destination by its IP address (127.0.0.1 or [::1])`)
  const protocol = url.protocol as "https:" | "http:"
  if (protocol === "http:" && kind !== "loopback")
    return fail(`"${entry}": plain http is allowed only to a loopback address (tests); use https`)
  if (url.pathname === "/" && isSharedStorageHost(hostname))
    return fail(
      `"${entry}": ${hostname} serves every bucket; name the bucket (s3://<bucket>[/<prefix>] or a path ` +
        "that starts with the bucket)"
    )
  return ok({
    _tag: "UrlPrefix",
    entry,
    protocol,
    hostname,
    port: url.port === "" ? (protocol === "https:" ? "443" : "80") : url.port,
    pathPrefix: url.pathname
  })
}

/** Parses a whole allowlist; the error names the entry's index, as the config decoder would. */
export const parseAllowlist = (entries: ReadonlyArray<string>): Parsed<ReadonlyArray<AllowedDestination>> => {
  const out: AllowedDestination[] = []
  for (const [i, e] of entries.entries()) {
    const p = parseAllowedDestination(e)
    if (!p.ok) return fail(`${ALLOWLIST_FIELD}.${i}: ${p.error}`)
    out.push(p.value)
  }
  return ok(out)
}

/** Parses an allowlist that the config decoder already checked; a bad entry here is a programming error. */
export const compileAllowlist = (entries: ReadonlyArray<string>): ReadonlyArray<AllowedDestination> => {
  const p = parseAllowlist(entries)
  if (!p.ok) throw new Error(`invalid destination allowlist: ${p.error}`)
  return p.value
}
