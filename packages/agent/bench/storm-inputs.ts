/**
 * The inputs of the storm table (bench/storm-table.ts, issue #39), per source kind: where its lines go, its benign
 * chatter, its storm's fault lines (one reason, repeated with a few subjects) and ten distinct faults, each of a
 * reason the storm never raises.
 *
 * The kernel's ten distinct faults are cited fixture lines (test/fixtures) of ten single-line kernel rules. The
 * other sources have too few single-line reasons of their own for ten (ipamd.log and kube-proxy one each, the
 * kubelet's journal four), so
 * theirs are the operator's own rules (`logRules`, docs/log-rules.md) on that source naming the same ten catalog
 * reasons: what the lanes and the sinks do with a finding does not depend on the rule that made it.
 */
import { ALL_FAULT_LINES } from "../test/fixtures/all-log-lines.ts"

export type Kind = "kmsg" | "journal" | "file" | "podlogs"
export const KINDS: readonly Kind[] = ["kmsg", "journal", "file", "podlogs"]

/** The agent's source id of each kind (its `nodemend_agent_log_lines_read_total{source}`). */
export const SOURCE: Record<Kind, string> = {
  kmsg: "dmesg",
  journal: "journal:kubelet",
  file: "file:/var/log/aws-routed-eni/ipamd.log",
  podlogs: "podlogs:kube-proxy"
}
/** The host-root file each kind's lines are appended to (the journal's: a journal file renamed into place). */
export const PATH: Record<Exclude<Kind, "journal">, string> = {
  kmsg: "dev/kmsg",
  file: "var/log/aws-routed-eni/ipamd.log",
  podlogs: "var/log/pods/kube-system_kube-proxy-5b0a1_0d1c2b3a-1111-2222-3333-5b0a10000000/kube-proxy/0.log"
}

/** The ten distinct faults' reasons: single-line kernel rules of Event severity (a Condition reason shares its condition with the others), none raised by any storm below. */
export const DISTINCT_REASONS = [
  "ConntrackExceededKernel",
  "KernelBug",
  "AppCrash",
  "AppBlocked",
  "OutOfMemoryKill",
  "Ext4FilesystemError",
  "HardwareErrorRecoverable",
  "HardwareErrorCorrected",
  "MemoryErrorCorrected",
  "FilesystemRemountedReadOnly"
] as const

const kernelFixture = (reason: string): string => {
  const f = ALL_FAULT_LINES.find((l) => l.source === "dmesg" && l.reason === reason)
  if (f === undefined) throw new Error(`no dmesg fixture of ${reason}`)
  return f.text
}

const operatorLine = (reason: string) => `nodemend-bench fault ${reason};`

/** The operator's rules that give the non-kernel sources the ten distinct reasons (the agent's config). */
export const benchConfig = (): string =>
  `${JSON.stringify({
    logRules: (["journal", "file", "podlogs"] as const).flatMap((kind) =>
      DISTINCT_REASONS.map((reason) => ({
        id: `bench.${kind}.${reason}`,
        sources: [SOURCE[kind]],
        reason,
        pattern: `nodemend-bench fault ${reason};`
      }))
    )
  })}\n`

const iso = () => new Date().toISOString()
/** The text of a line as the kind carries it (the journal's: the MESSAGE). */
const frame: Record<Kind, (text: string) => string> = {
  kmsg: (t) => t,
  journal: (t) => t,
  file: (t) => JSON.stringify({ level: "error", ts: iso(), caller: "ipamd/ipamd.go:934", msg: t }),
  podlogs: (t) => `${iso()} stderr F ${t}`
}

const chatter: Record<Kind, (i: number) => string> = {
  kmsg: (i) => `IPv6: ADDRCONF(NETDEV_CHANGE): eni${i.toString(16)}: link becomes ready`,
  journal: (i) =>
    `I1101 06:38:40.581547 1234 kubelet.go:2200] "SyncLoop (PLEG): event for pod" pod="default/web-${i}"`,
  file: (i) =>
    JSON.stringify({
      level: "debug",
      ts: iso(),
      caller: "ipamd/ipamd.go:651",
      msg: `Reconciling ENI/IP pool info ${i}`
    }),
  podlogs: (i) =>
    `${iso()} stderr F I1101 06:38:40.581547       1 proxier.go:${800 + (i % 100)}] "Syncing iptables rules" ipFamily=IPv4 round=${i}`
}

/** The storm's fault lines: one reason (the kernel's: two) with a few subjects, as a real storm repeats. */
const stormFault: Record<Kind, (i: number) => string> = {
  kmsg: (i) =>
    i % 2 === 0
      ? `watchdog: BUG: soft lockup - CPU#${i % 8} stuck for ${22 + (i % 40)}s! [kworker/${i % 8}:1:${i}]`
      : `I/O error, dev nvme1n1, sector ${131209936 + i} op 0x0:(READ) flags 0x80700 phys_seg 25 prio class 0`,
  journal: (i) =>
    `E1101 06:38:40.581547 1234 pod_workers.go:1298] "Error syncing pod" err="failed to \\"StartContainer\\": OCI runtime create failed: container_linux.go:380: starting container process caused: exec: \\"/app-${i}\\": permission denied: unknown"`,
  file: (i) =>
    JSON.stringify({
      level: "error",
      ts: iso(),
      caller: "ipamd/ipamd.go:934",
      msg: `Failed to allocate a private IP/Prefix addresses on ENI eni-${(i % 4).toString(16).padStart(17, "0")}: InsufficientFreeAddressesInSubnet: The specified subnet does not have enough free addresses to satisfy the request.`
    }),
  podlogs: (i) =>
    `${iso()} stderr F E1101 06:38:40.581547       1 reflector.go:138] k8s.io/client-go/informers/factory.go:134: Failed to watch *v1.Resource${i % 4}: failed to list *v1.Resource${i % 4}: the server could not find the requested resource`
}
export const STORM_REASONS: Record<Kind, readonly string[]> = {
  kmsg: ["SoftLockup", "BlockDeviceIOError"],
  journal: ["ContainerRuntimeFailed"],
  file: ["IPAMDNoIPs"],
  podlogs: ["KubeProxyNotReady"]
}

/** The line of the k-th distinct fault on `kind`. */
export const distinctFault = (kind: Kind, k: number): string => {
  const reason = DISTINCT_REASONS[k]!
  return kind === "kmsg" ? kernelFixture(reason) : frame[kind](operatorLine(reason))
}

/**
 * `n` storm lines, `percent` of them the storm's faults spread evenly (Bresenham), with `inside` (indices) replaced
 * by the given lines.
 */
export const stormLines = (
  kind: Kind,
  n: number,
  percent: number,
  inside: ReadonlyMap<number, string>
): string[] => {
  const out = new Array<string>(n)
  let faults = 0
  for (let i = 0; i < n; i++) {
    const due = Math.floor(((i + 1) * percent) / 100)
    out[i] = inside.get(i) ?? (due > faults ? stormFault[kind](i) : chatter[kind](i))
    if (due > faults) faults = due
  }
  return out
}
