/**
 * MissingIPRules, MissingIPRoutes and MissingDefaultRoutes (reference 2.5). Only where the AWS VPC CNI is
 * installed (same detection as the IPAMD check). Every pod IP that IPAMD's introspection endpoint
 * (`GET http://127.0.0.1:61679/v1/enis`) reports as assigned (non-empty IPAM key) must have an `ip [-6] rule`
 * (`512: from all to <ip> lookup main` or `1536: from <ip> lookup <table>`); an IP that has its rule must
 * also have a `<ip> dev <dev> scope link` route (IPv6: `... metric 1024 pref medium`) in
 * `ip [-6] route show table all`, the family taken from the first IP; with IPv4 pods, every table named
 * by a 1536 rule must have an IPv4 `default via ... table <t>` route.
 *
 * `{prefix}` in the messages: NMA writes `secondary ` when the IP's ENI is the *primary* one (inverted).
 * nodemend writes `secondary ` when the IP's ENI is a secondary ENI (IsPrimary false) and nothing for
 * the primary ENI, which is what the words say.
 *
 * The /v1/enis body is the VPC CNI's `datastore.ENIInfos` marshalled to JSON
 * (aws/amazon-vpc-cni-k8s pkg/ipamd/datastore/data_store.go: `ENIs map[string]ENI`, each ENI with
 * `IsPrimary`, `AvailableIPv4Cidrs`/`IPv6Cidrs` maps of `CidrInfo{IPAddresses map[string]*AddressInfo}`,
 * each `AddressInfo{Address, IPAMKey{networkName, containerID, ifName}}`).
 */
import { Effect, Schema } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { type CommandRunner, exitDetail } from "./command-runner.ts"
import { detection } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"
import { vpcCniInstalled } from "./ipamd.ts"
import { getText } from "../platform/node-http.ts"

/**
 * The VPC CNI's INTROSPECTION_BIND_ADDRESS default (EKS docs, "amazon-vpc-cni-k8s" environment variables).
 * NMA asks `localhost`; we ask the address IPAMD binds: with no IPv4 address besides loopback (getaddrinfo's
 * AI_ADDRCONFIG) or `::1` listed first in /etc/hosts, `localhost` does not reach it (found running the check
 * in a network namespace, real-commands.test.ts).
 */
export const IPAMD_ENIS_URL = "http://127.0.0.1:61679/v1/enis"
const TIMEOUT_MS = 10_000

const IPAMKey = Schema.Struct({
  networkName: Schema.optional(Schema.String),
  containerID: Schema.optional(Schema.String),
  ifName: Schema.optional(Schema.String)
})
const AddressInfo = Schema.Struct({
  Address: Schema.optional(Schema.String),
  IPAMKey: Schema.optional(IPAMKey)
})
const CidrInfo = Schema.Struct({
  IPAddresses: Schema.optional(Schema.NullOr(Schema.Record(Schema.String, Schema.NullOr(AddressInfo))))
})
const CidrMap = Schema.optional(Schema.NullOr(Schema.Record(Schema.String, Schema.NullOr(CidrInfo))))
const Eni = Schema.Struct({
  IsPrimary: Schema.optional(Schema.Boolean),
  AvailableIPv4Cidrs: CidrMap,
  IPv6Cidrs: CidrMap
})
const EniInfos = Schema.Struct({
  ENIs: Schema.optional(Schema.NullOr(Schema.Record(Schema.String, Eni)))
})

export interface PodIP {
  readonly ip: string
  readonly primaryEni: boolean
}

/** The assigned pod IPs in a /v1/enis body, in document order; undefined when the body is not one. */
export const assignedPodIPs = (body: string): PodIP[] | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return undefined
  }
  const decoded = Schema.decodeUnknownOption(EniInfos)(parsed)
  if (decoded._tag === "None") return undefined
  const out: PodIP[] = []
  for (const eni of Object.values(decoded.value.ENIs ?? {})) {
    for (const cidrs of [eni.AvailableIPv4Cidrs, eni.IPv6Cidrs]) {
      for (const cidr of Object.values(cidrs ?? {})) {
        for (const [key, addr] of Object.entries(cidr?.IPAddresses ?? {})) {
          const k = addr?.IPAMKey
          const empty =
            k === undefined ||
            ((k.networkName ?? "") === "" && (k.containerID ?? "") === "" && (k.ifName ?? "") === "")
          if (empty) continue
          out.push({ ip: addr?.Address || key, primaryEni: eni.IsPrimary === true })
        }
      }
    }
  }
  return out
}

export interface IPRules {
  /** Destinations of `512: from all to <ip> lookup main`. */
  readonly toMain: ReadonlySet<string>
  /** Sources of `1536: from <ip> lookup <table>`. */
  readonly fromTable: ReadonlySet<string>
  /** Tables named by 1536 rules, in first-seen order. */
  readonly tables: readonly string[]
}

const RULE_TO_MAIN = /^512:\s+from all to (\S+) lookup main\b/
const RULE_FROM = /^1536:\s+from (\S+) lookup (\S+)/
const ROUTE_V4 = /^(\S+) dev \S+.* scope link\b/
// iproute2 puts flags between metric and pref (`2001:db8::5 dev v0 metric 1024 linkdown pref medium` while
// the pod's host veth has no carrier; seen with iproute2 6.1.0): the route is there all the same.
const ROUTE_V6 = /^(\S+) dev \S+.* metric 1024\b.* pref medium\b/
const DEFAULT_ROUTE = /^default via \S+ dev \S+.* table (\w+)/

/** `ip rule` output (`ip rule` prints `<priority>:\t<selector> lookup <table>`). */
export const parseIPRules = (text: string): IPRules => {
  const toMain = new Set<string>()
  const fromTable = new Set<string>()
  const tables: string[] = []
  for (const line of text.split("\n")) {
    const t = line.trim()
    const m = RULE_TO_MAIN.exec(t)
    if (m) toMain.add(bare(m[1]!))
    const f = RULE_FROM.exec(t)
    if (f) {
      fromTable.add(bare(f[1]!))
      if (!tables.includes(f[2]!)) tables.push(f[2]!)
    }
  }
  return { toMain, fromTable, tables }
}

/** `10.0.1.5/32` and `10.0.1.5` name the same host. */
const bare = (addr: string) => addr.replace(/\/(32|128)$/, "")

/** Destinations of link-scope pod routes and the tables holding a default route, from `ip [-6] route show table all`. */
export const parseRoutes = (
  text: string,
  ipv6: boolean
): { linkRoutes: Set<string>; defaultTables: Set<string> } => {
  const linkRoutes = new Set<string>()
  const defaultTables = new Set<string>()
  for (const line of text.split("\n")) {
    const t = line.trim()
    const r = (ipv6 ? ROUTE_V6 : ROUTE_V4).exec(t)
    if (r) linkRoutes.add(bare(r[1]!))
    const d = DEFAULT_ROUTE.exec(t)
    if (d) defaultTables.add(d[1]!)
  }
  return { linkRoutes, defaultTables }
}

const prefixOf = (p: PodIP) => (p.primaryEni ? "" : "secondary ")

/** The decision: findings for the pod IPs given the host's rules and routes (`routes` in the pods' family). */
export const ipRoutingFindings = (
  pods: readonly PodIP[],
  rulesText: string,
  routesText: string,
  ipv4RoutesText: string,
  nowMs: number
): Finding[] => {
  const ipv6 = pods[0]?.ip.includes(":") === true
  const rules = parseIPRules(rulesText)
  const { linkRoutes } = parseRoutes(routesText, ipv6)
  const out: Finding[] = []
  for (const p of pods) {
    if (!rules.toMain.has(p.ip) && !rules.fromTable.has(p.ip)) {
      out.push(
        detection(
          "MissingIPRules",
          `Pod IP ${p.ip} is missing ${prefixOf(p)}rules: Expected entry like \`from all to ${p.ip} lookup main\``,
          nowMs,
          p.ip
        )
      )
      continue
    }
    if (!linkRoutes.has(p.ip)) {
      const like = ipv6 ? `${p.ip} dev <dev> metric 1024 pref medium` : `${p.ip} dev <dev> scope link`
      out.push(
        detection(
          "MissingIPRoutes",
          `Pod IP ${p.ip} is missing ${prefixOf(p)}routes: Expected entry like \`${like}\``,
          nowMs,
          p.ip
        )
      )
    }
  }
  const { defaultTables } = parseRoutes(ipv4RoutesText, false)
  // IPv4 only, as in NMA: the tables of IPv6 rules would need IPv6 default routes.
  for (const table of ipv6 ? [] : rules.tables) {
    if (defaultTables.has(table)) continue
    out.push(
      detection(
        "MissingDefaultRoutes",
        `Missing default route rules for table ${table}: Expected entry like \`default via <gateway-ip> dev <dev> table ${table}\``,
        nowMs,
        table
      )
    )
  }
  return out
}

const fetchText = (url: string): Effect.Effect<string | undefined> =>
  Effect.tryPromise({
    try: (signal) => getText(url, TIMEOUT_MS, signal),
    catch: (e) => e
  }).pipe(
    Effect.catch((e) =>
      Effect.logWarning("IPAMD introspection unreachable", { url, error: String(e) }).pipe(
        Effect.as(undefined)
      )
    )
  )

export const ipRoutingCheck = (
  files: HostFiles,
  runner: CommandRunner["Service"],
  intervalMs: number,
  enisUrl: string = IPAMD_ENIS_URL
): PeriodicCheck => {
  const ip = (args: readonly string[]) =>
    runner.run("ip", args, { timeoutMs: TIMEOUT_MS }).pipe(
      Effect.flatMap((r) =>
        r.exitCode === 0
          ? Effect.succeed(r.stdout)
          : Effect.logWarning(`ip ${args.join(" ")} failed`, { error: exitDetail(r) }).pipe(
              Effect.as(undefined)
            )
      ),
      Effect.catch((e) => Effect.logWarning("ip failed", { error: e.message }).pipe(Effect.as(undefined)))
    )
  return {
    name: "ip-routing",
    monitor: "networking",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        if (!(yield* vpcCniInstalled(files))) return [] as Finding[]
        const body = yield* fetchText(enisUrl)
        const pods = body === undefined ? undefined : assignedPodIPs(body)
        if (pods === undefined) return [] as Finding[]
        // An IPv6 pod's rules are IPv6 rules: `ip rule` lists IPv4 ones only (found running the check
        // against real `ip`; every IPv6 pod read as MissingIPRules).
        const ipv6 = pods[0]?.ip.includes(":") === true
        const rules = yield* ip(ipv6 ? ["-6", "rule"] : ["rule"])
        if (rules === undefined) return [] as Finding[]
        const ipv4 = yield* ip(["route", "show", "table", "all"])
        if (ipv4 === undefined) return [] as Finding[]
        const routes = ipv6 ? yield* ip(["-6", "route", "show", "table", "all"]) : ipv4
        if (routes === undefined) return [] as Finding[]
        return ipRoutingFindings(pods, rules, routes, ipv4, tick.nowMs)
      })
  }
}
