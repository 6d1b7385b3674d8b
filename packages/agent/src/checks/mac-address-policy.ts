/**
 * MACAddressPolicyMisconfigured (reference 2.5). Only on Ubuntu (`ID=ubuntu` in /etc/os-release) with the
 * VPC CNI installed: Ubuntu's systemd ships `99-default.link` with `MACAddressPolicy=persistent`, which
 * makes udev rewrite the MAC of the veth/vlan devices the CNI creates. For each distinct `.link` file that
 * `networkctl --json=short` reports for an interface, the effective `[Link] MACAddressPolicy=` (the last
 * assignment across the file and its drop-ins, as `systemd-analyze cat-config <file>` prints them) must
 * be `none` or empty.
 *
 * networkctl's JSON is systemd's `manager_build_json` (systemd src/network/networkd-json.c):
 * `{"Interfaces":[{"Index":1,"Name":"lo",...,"LinkFile":"/usr/lib/systemd/network/99-default.link",...}]}`,
 * `LinkFile` present only when udev applied one (`JSON_BUILD_PAIR_STRING_NON_EMPTY`).
 */
import { Effect, Schema } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { type CommandRunner, exitDetail } from "./command-runner.ts"
import { detection } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"
import { vpcCniInstalled } from "./ipamd.ts"

const NetworkctlList = Schema.Struct({
  Interfaces: Schema.optional(
    Schema.NullOr(Schema.Array(Schema.Struct({ LinkFile: Schema.optional(Schema.NullOr(Schema.String)) })))
  )
})

/** Distinct LinkFile paths in first-seen order; undefined when the output is not networkctl's JSON. */
export const linkFilesOf = (json: string): string[] | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return undefined
  }
  const decoded = Schema.decodeUnknownOption(NetworkctlList)(parsed)
  if (decoded._tag === "None") return undefined
  const out: string[] = []
  for (const i of decoded.value.Interfaces ?? []) {
    const f = i.LinkFile
    if (f !== undefined && f !== null && f !== "" && !out.includes(f)) out.push(f)
  }
  return out
}

/**
 * The last value assigned to `key` in `section` of systemd unit-file syntax (systemd.syntax(7)): `#`/`;`
 * comments, `[Section]` headers, `Key=value` with whitespace around both trimmed, a trailing `\` joining
 * the next line. Undefined when the key is never assigned.
 */
export const lastAssignment = (text: string, section: string, key: string): string | undefined => {
  let current = ""
  let value: string | undefined
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.trim()
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue
    if (line.startsWith("[") && line.endsWith("]")) {
      current = line.slice(1, -1).trim()
      continue
    }
    while (line.endsWith("\\") && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i]!.trim()}`
    const eq = line.indexOf("=")
    if (eq < 0 || current !== section) continue
    if (line.slice(0, eq).trim() === key) value = line.slice(eq + 1).trim()
  }
  return value
}

export const isUbuntu = (osRelease: string | undefined): boolean =>
  osRelease !== undefined && /^ID="?ubuntu"?\s*$/m.test(osRelease)

export const macPolicyFinding = (file: string, catConfig: string, nowMs: number): Finding | undefined => {
  const value = lastAssignment(catConfig, "Link", "MACAddressPolicy")
  if (value === undefined || value === "" || value === "none") return undefined
  return detection(
    "MACAddressPolicyMisconfigured",
    `MACAddressPolicy in ${file} is set to "${value}" instead of 'none', which may cause network issues`,
    nowMs,
    file
  )
}

export const macAddressPolicyCheck = (
  files: HostFiles,
  runner: CommandRunner["Service"],
  intervalMs: number
): PeriodicCheck => {
  const stdoutOf = (command: string, args: readonly string[]) =>
    runner.run(command, args, { timeoutMs: 10_000 }).pipe(
      Effect.flatMap((r) =>
        r.exitCode === 0
          ? Effect.succeed(r.stdout)
          : Effect.logWarning(`${command} failed`, { error: exitDetail(r) }).pipe(Effect.as(undefined))
      ),
      Effect.catch((e) =>
        Effect.logWarning(`${command} failed`, { error: e.message }).pipe(Effect.as(undefined))
      )
    )
  return {
    name: "mac-address-policy",
    monitor: "networking",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        if (!isUbuntu(yield* files.text("etc/os-release"))) return [] as Finding[]
        if (!(yield* vpcCniInstalled(files))) return [] as Finding[]
        const list = yield* stdoutOf("networkctl", ["--json=short"])
        const linkFiles = list === undefined ? undefined : linkFilesOf(list)
        if (linkFiles === undefined) return [] as Finding[]
        const out: Finding[] = []
        for (const file of linkFiles) {
          const config = yield* stdoutOf("systemd-analyze", ["cat-config", file])
          if (config === undefined) continue
          const f = macPolicyFinding(file, config, tick.nowMs)
          if (f !== undefined) out.push(f)
        }
        return out
      })
  }
}
