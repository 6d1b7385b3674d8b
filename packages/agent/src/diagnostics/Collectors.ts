/**
 * What a log bundle contains, as data: each collector names its category, its output path in the bundle and
 * where the bytes come from. Host files are read under the host root (the DaemonSet mounts the host's `/` at
 * `--host-root`); host commands run in the agent's (host) network and PID namespaces.
 */
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import type { LogCategory } from "@nodemend/kube-access/NodeDiagnostic"

export type CollectorSource =
  /** A command; stdout goes to the output file. `optional`: a missing binary means "not present here", not an error. */
  | { readonly _tag: "Command"; readonly argv: ReadonlyArray<string>; readonly optional?: boolean }
  /** A host file (path relative to the host root). `optional`: absent is fine. */
  | { readonly _tag: "File"; readonly path: string; readonly optional?: boolean }
  /** Regular files of a host directory, not recursive, symlinks skipped (they would resolve outside the host root). */
  | {
      readonly _tag: "Directory"
      readonly path: string
      readonly maxFiles?: number
      readonly optional?: boolean
    }
  /** In-process data (agent state), written as JSON or text. */
  | { readonly _tag: "Provider"; readonly get: (signal: AbortSignal) => Promise<unknown> }

export interface Collector {
  /** Stable name used in the errors file and manifest. */
  readonly name: string
  readonly category: Exclude<LogCategory, "All">
  /** Path inside the bundle (a directory for `Directory` sources). */
  readonly output: string
  readonly source: CollectorSource
  /** Default: CollectorDefaults.timeoutMs. */
  readonly timeoutMs?: number
  /** Output is truncated past this many bytes. Default: CollectorDefaults.maxBytes. */
  readonly maxBytes?: number
}

export interface CollectorDefaults {
  readonly timeoutMs: number
  readonly maxBytes: number
}

export const COLLECTOR_DEFAULTS: CollectorDefaults = { timeoutMs: 10_000, maxBytes: 32 * 1024 * 1024 }

/** Journal lines per unit: bounded so a chatty kubelet cannot make the bundle (or the capture) huge. */
export const JOURNAL_LINES = 20_000

export interface DefaultCollectorOptions {
  readonly hostRoot: string
  /** Current conditions, recent detections... whatever the agent runtime wants in `agent/state.json`. */
  readonly agentState?: (signal: AbortSignal) => Promise<unknown>
}

const journal = (hostRoot: string, unit: string): ReadonlyArray<string> => [
  "journalctl",
  ...(hostRoot === "/" ? [] : [`--root=${hostRoot}`]),
  "--no-pager",
  "-o",
  "short-iso-precise",
  "-u",
  unit,
  "-n",
  String(JOURNAL_LINES)
]

/** Reads two small host files into one text (conntrack table usage). */
const conntrackCounts =
  (hostRoot: string) =>
  async (signal: AbortSignal): Promise<string> => {
    const read = (p: string) =>
      readFile(join(hostRoot, p), { encoding: "utf8", signal }).then(
        (s) => s.trim(),
        (e: NodeJS.ErrnoException) => `unavailable (${e.code ?? e.message})`
      )
    const [count, max] = await Promise.all([
      read("proc/sys/net/netfilter/nf_conntrack_count"),
      read("proc/sys/net/netfilter/nf_conntrack_max")
    ])
    return `nf_conntrack_count ${count}\nnf_conntrack_max ${max}\n`
  }

export const defaultCollectors = ({
  hostRoot,
  agentState
}: DefaultCollectorOptions): ReadonlyArray<Collector> => {
  const containerdSock = join(hostRoot, "run/containerd/containerd.sock")
  const ctr = (...args: string[]) => ["ctr", "--address", containerdSock, "--namespace", "k8s.io", ...args]
  const list: Collector[] = [
    // Base
    {
      name: "os-release",
      category: "Base",
      output: "system/os-release",
      source: { _tag: "File", path: "etc/os-release", optional: true }
    },
    {
      name: "meminfo",
      category: "Base",
      output: "system/meminfo.txt",
      source: { _tag: "File", path: "proc/meminfo" }
    },
    {
      name: "loadavg",
      category: "Base",
      output: "system/loadavg.txt",
      source: { _tag: "File", path: "proc/loadavg" }
    },
    {
      name: "uptime",
      category: "Base",
      output: "system/uptime.txt",
      source: { _tag: "File", path: "proc/uptime" }
    },
    // System
    {
      name: "dmesg",
      category: "System",
      output: "kernel/dmesg.txt",
      source: { _tag: "Command", argv: ["dmesg", "--time-format", "iso", "--nopager"] }
    },
    {
      name: "uname",
      category: "System",
      output: "kernel/uname.txt",
      source: { _tag: "Command", argv: ["uname", "-a"] }
    },
    {
      name: "mounts",
      category: "System",
      output: "storage/mounts.txt",
      source: { _tag: "File", path: "proc/1/mounts" }
    },
    {
      name: "df",
      category: "System",
      output: "storage/df.txt",
      source: { _tag: "Command", argv: ["df", "-PT"] }
    },
    {
      name: "df-inodes",
      category: "System",
      output: "storage/df-inodes.txt",
      source: { _tag: "Command", argv: ["df", "-Pi"] }
    },
    {
      name: "lsblk",
      category: "System",
      output: "storage/lsblk.txt",
      source: {
        _tag: "Command",
        argv: ["lsblk", "-a", "-o", "NAME,SIZE,TYPE,FSTYPE,MOUNTPOINT,MODEL,SERIAL"]
      }
    },
    // Runtime
    {
      name: "kubelet-journal",
      category: "Runtime",
      output: "kubelet/kubelet.log",
      source: { _tag: "Command", argv: journal(hostRoot, "kubelet") }
    },
    {
      name: "containerd-journal",
      category: "Runtime",
      output: "containerd/containerd.log",
      source: { _tag: "Command", argv: journal(hostRoot, "containerd") }
    },
    {
      name: "containerd-config",
      category: "Runtime",
      output: "containerd/config.toml",
      source: { _tag: "File", path: "etc/containerd/config.toml", optional: true }
    },
    {
      name: "containerd-containers",
      category: "Runtime",
      output: "containerd/containers.txt",
      source: { _tag: "Command", argv: ctr("containers", "list"), optional: true }
    },
    {
      name: "containerd-tasks",
      category: "Runtime",
      output: "containerd/tasks.txt",
      source: { _tag: "Command", argv: ctr("tasks", "list"), optional: true }
    },
    // Networking
    {
      name: "cni-config",
      category: "Networking",
      output: "cni",
      source: { _tag: "Directory", path: "etc/cni/net.d", optional: true }
    },
    {
      name: "resolv-conf",
      category: "Networking",
      output: "networking/resolv.conf",
      source: { _tag: "File", path: "etc/resolv.conf", optional: true }
    },
    {
      name: "ip-addr",
      category: "Networking",
      output: "networking/ip-addr.txt",
      source: { _tag: "Command", argv: ["ip", "addr", "show"] }
    },
    {
      name: "ip-route",
      category: "Networking",
      output: "networking/ip-route.txt",
      source: { _tag: "Command", argv: ["ip", "route", "show", "table", "all"] }
    },
    {
      name: "ip-rule",
      category: "Networking",
      output: "networking/ip-rule.txt",
      source: { _tag: "Command", argv: ["ip", "rule", "show"] }
    },
    {
      name: "iptables-save",
      category: "Networking",
      output: "networking/iptables-save.txt",
      source: { _tag: "Command", argv: ["iptables-save"] }
    },
    {
      name: "ip6tables-save",
      category: "Networking",
      output: "networking/ip6tables-save.txt",
      source: { _tag: "Command", argv: ["ip6tables-save"], optional: true }
    },
    {
      name: "conntrack",
      category: "Networking",
      output: "networking/conntrack.txt",
      source: { _tag: "Provider", get: conntrackCounts(hostRoot) }
    },
    // Device: only where the tools are installed.
    {
      name: "nvidia-smi",
      category: "Device",
      output: "gpu/nvidia-smi-q.txt",
      source: { _tag: "Command", argv: ["nvidia-smi", "-q"], optional: true },
      timeoutMs: 30_000
    },
    {
      name: "dcgmi-discovery",
      category: "Device",
      output: "gpu/dcgmi-discovery.txt",
      source: { _tag: "Command", argv: ["dcgmi", "discovery", "-l"], optional: true }
    },
    {
      name: "dcgmi-health",
      category: "Device",
      output: "gpu/dcgmi-health.txt",
      source: { _tag: "Command", argv: ["dcgmi", "health", "-c"], optional: true }
    }
  ]
  if (agentState) {
    list.push({
      name: "agent-state",
      category: "Base",
      output: "agent/state.json",
      source: { _tag: "Provider", get: agentState }
    })
  }
  return list
}
