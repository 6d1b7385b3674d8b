/**
 * IPTablesVersionsMismatch: node-problem-detector's iptables-mode-monitor (config/iptables-mode-monitor.json,
 * config/plugin/iptables_mode.sh at v1.36.0, after kubernetes-sigs/iptables-wrappers): since iptables 1.8 the
 * command-line tools come as "legacy" (the kernel's iptables API) and "nft" (translated to nftables). The two
 * are different kernel subsystems and rules from both do not combine as either side expects: kube-proxy, the VPC
 * CNI and the AMI's own tools must agree on one. NPD counts the rule lines (`-A ...`, `-N` are not rules but NPD
 * counts every line starting with `-`, as does this check) of `ip[6]tables-legacy-save` and `ip[6]tables-nft-save`
 * and reports a temporary problem when both are non-zero; it runs once a day.
 *
 * An Event, as NPD's: a misconfiguration of the node's software, which a replacement node from the same AMI and
 * DaemonSets would have too. A tool that is missing or fails counts as no rules (NPD's `|| true`); when no tool
 * runs at all the check reports nothing.
 */
import { Effect } from "effect"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import type { CommandRunner } from "./command-runner.ts"
import { detection } from "./finding.ts"

export const LEGACY_SAVES = ["iptables-legacy-save", "ip6tables-legacy-save"] as const
export const NFT_SAVES = ["iptables-nft-save", "ip6tables-nft-save"] as const

/** NPD's `grep -c '^-'`: the lines of an iptables-save dump that start with `-`. */
export const countRuleLines = (dump: string): number => {
  let n = 0
  for (const line of dump.split("\n")) if (line.startsWith("-")) n++
  return n
}

export const iptablesModeFindings = (legacy: number, nft: number, nowMs: number): Finding[] =>
  legacy > 0 && nft > 0
    ? [
        detection(
          "IPTablesVersionsMismatch",
          `Found rules from both versions, iptables-legacy: ${legacy} iptables-nft: ${nft}`,
          nowMs
        )
      ]
    : []

export const iptablesModeCheck = (runner: CommandRunner["Service"], intervalMs: number): PeriodicCheck => {
  /** The dump's rule-line count, or undefined when the tool did not run or failed. */
  const count = (cmd: string) =>
    runner.run(cmd, [], { timeoutMs: 5_000 }).pipe(
      Effect.map((r) => (r.exitCode === 0 ? countRuleLines(r.stdout) : undefined)),
      Effect.catch(() => Effect.succeed(undefined))
    )
  const total = (cmds: readonly string[]) =>
    Effect.gen(function* () {
      let ran = false
      let n = 0
      for (const cmd of cmds) {
        const c = yield* count(cmd)
        if (c === undefined) continue
        ran = true
        n += c
      }
      return ran ? n : undefined
    })
  return {
    name: "iptables-mode",
    monitor: "networking",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const legacy = yield* total(LEGACY_SAVES)
        const nft = yield* total(NFT_SAVES)
        if (legacy === undefined && nft === undefined) {
          yield* Effect.logWarning(
            "neither iptables-legacy-save nor iptables-nft-save ran; iptables-mode not watching"
          )
          return [] as Finding[]
        }
        return iptablesModeFindings(legacy ?? 0, nft ?? 0, tick.nowMs)
      })
  }
}
