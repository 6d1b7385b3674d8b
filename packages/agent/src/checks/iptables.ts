/**
 * UnexpectedRejectRule and PortConflict (reference 2.5) from the host's `iptables-save` and
 * `ip6tables-save`: every appended REJECT/DROP rule outside NMA's allowlist (kube-proxy, Calico, the
 * VPC CNI's own rules, plus `allowedIPTablesChains` from config), and any DNAT of the kubelet port 10250.
 * When iptables-nft says legacy tables are present too, `iptables-legacy-save` is read as well (NMA reads
 * `iptables-save` only, so it never sees those rules).
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { type CommandRunner, exitDetail } from "./command-runner.ts"
import { detection } from "./finding.ts"

export interface IptablesRule {
  readonly table: string
  readonly chain: string
  readonly raw: string
  /** Option name (`-j`, `--comment`, ...) to its values in order. */
  readonly options: ReadonlyMap<string, readonly string[]>
}

/** Splits an iptables-save line like a shell would: double quotes group, backslash escapes. */
export const tokenize = (line: string): string[] => {
  const out: string[] = []
  let cur = ""
  let inToken = false
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === "\\" && i + 1 < line.length) {
      cur += line[++i]
      inToken = true
    } else if (c === '"') {
      quoted = !quoted
      inToken = true
    } else if (!quoted && /\s/.test(c)) {
      if (inToken) out.push(cur)
      cur = ""
      inToken = false
    } else {
      cur += c
      inToken = true
    }
  }
  if (inToken) out.push(cur)
  return out
}

export const parseIptablesSave = (text: string): IptablesRule[] => {
  const rules: IptablesRule[] = []
  let table = ""
  for (const line of text.split("\n")) {
    if (line.startsWith("*")) table = line.slice(1).trim()
    if (!line.startsWith("-A ")) continue
    const tokens = tokenize(line)
    const options = new Map<string, string[]>()
    let key = ""
    for (const t of tokens.slice(2)) {
      if (t.startsWith("-") && t !== "-" && !/^-\d/.test(t)) {
        key = t
        if (!options.has(key)) options.set(key, [])
      } else if (key !== "") options.get(key)!.push(t)
    }
    rules.push({ table, chain: tokens[1] ?? "", raw: line.trim(), options })
  }
  return rules
}

const has = (r: IptablesRule, option: string, value?: string) => {
  const v = r.options.get(option)
  return v !== undefined && (value === undefined || v.includes(value))
}
const commentHas = (r: IptablesRule, ...needles: string[]) =>
  (r.options.get("--comment") ?? []).some((c) => needles.some((n) => c.includes(n)))
const target = (r: IptablesRule) =>
  r.options.get("-j")?.[0] ??
  r.options.get("--jump")?.[0] ??
  r.options.get("-g")?.[0] ??
  r.options.get("--goto")?.[0]

const ALWAYS_ALLOWED_CHAINS = new Set([
  "KUBE-IPVS-FILTER",
  "KUBE-IPVS-OUT-FILTER",
  "KUBE-SOURCE-RANGES-FIREWALL"
])

export const isAllowedReject = (r: IptablesRule, allowed: ReadonlySet<string>): boolean => {
  if (allowed.has(`${r.table}/${r.chain}`)) return true
  if (ALWAYS_ALLOWED_CHAINS.has(r.chain) || r.chain.startsWith("cali-")) return true
  switch (r.chain) {
    case "KUBE-FORWARD":
      return has(r, "--ctstate", "INVALID")
    case "KUBE-FIREWALL":
      return commentHas(
        r,
        "block incoming localnet connections",
        "kubernetes firewall for dropping marked packets"
      )
    case "KUBE-SERVICES":
    case "KUBE-EXTERNAL-SERVICES":
      return (
        commentHas(r, "has no endpoints", "has no local endpoints") ||
        has(r, "--reject-with", "icmp-port-unreachable")
      )
    case "FORWARD":
      return commentHas(r, "Block Node Local Pod access")
    default:
      return false
  }
}

export const isReject = (r: IptablesRule): boolean => {
  const t = target(r)
  return t === "REJECT" || t === "DROP" || has(r, "--reject-with")
}

export const iptablesFindings = (text: string, allowed: ReadonlySet<string>, nowMs: number): Finding[] => {
  const out: Finding[] = []
  for (const r of parseIptablesSave(text)) {
    if (isReject(r) && !isAllowedReject(r, allowed))
      out.push(
        detection(
          "UnexpectedRejectRule",
          `Found an unexpected iptables reject rule: "${r.raw}"`,
          nowMs,
          r.raw
        )
      )
    if (has(r, "--dport", "10250") && target(r) === "DNAT")
      out.push(detection("PortConflict", "Potential iptables rule conflict on port 10250", nowMs, r.raw))
  }
  return out
}

/** iptables-nft 1.8.x: `# Warning: iptables-legacy tables present, use iptables-legacy-save to see them`. */
const LEGACY_PRESENT = /legacy tables present/

export const iptablesCheck = (
  runner: CommandRunner["Service"],
  allowedChains: readonly string[],
  intervalMs: number
): PeriodicCheck => {
  const allowed = new Set(allowedChains)
  const save = (cmd: string) =>
    runner.run(cmd, [], { timeoutMs: 10_000 }).pipe(
      Effect.flatMap((r) =>
        r.exitCode === 0
          ? Effect.succeed(r)
          : Effect.logWarning(`${cmd} failed`, { error: exitDetail(r) }).pipe(Effect.as(undefined))
      ),
      Effect.catch((e) => Effect.logWarning(`${cmd} failed`, { error: e.message }).pipe(Effect.as(undefined)))
    )
  return {
    name: "iptables",
    monitor: "networking",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const out: Finding[] = []
        for (const family of ["iptables", "ip6tables"]) {
          const r = yield* save(`${family}-save`)
          if (r === undefined) continue
          out.push(...iptablesFindings(r.stdout, allowed, tick.nowMs))
          // iptables-nft saves only the nf_tables rules; rules made with iptables-legacy stay in force but
          // show up only as this warning (stderr, exit 0), so they are read from the legacy tool too.
          if (LEGACY_PRESENT.test(r.stderr) || LEGACY_PRESENT.test(r.stdout)) {
            const legacy = yield* save(`${family}-legacy-save`)
            if (legacy !== undefined) out.push(...iptablesFindings(legacy.stdout, allowed, tick.nowMs))
          }
        }
        return out
      })
  }
}
