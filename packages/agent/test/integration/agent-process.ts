/**
 * Runs the real nodemend-agent binary (src/main.ts under Node's type stripping, or the shipped bundle
 * dist/nodemend-agent.mjs with the deployed V8 flags) against the test cluster, with a temporary host
 * root: boot id, /proc, /sys/class/net, /dev/kmsg as a regular file, and a journal directory written by
 * systemd-journal-remote when it is installed.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { kubeconfigPath } from "@nodemend/cluster-harness"
import { bundlesBuilt, deployedRuntime, shippedBundle } from "../../../../tools/bundle/shipped.mjs"

const PACKAGE_DIR = fileURLToPath(new URL("../..", import.meta.url))
const NODE = process.execPath
export const BUNDLE = join(PACKAGE_DIR, "dist/nodemend-agent.mjs")

const deployed = deployedRuntime("agent/daemonset.yaml")
/** The V8 flags of deploy/agent (DaemonSet command, systemd ExecStart). */
export const DEPLOYED_NODE_FLAGS = deployed.flags
/** The DaemonSet's literal environment (UV_THREADPOOL_SIZE, glibc malloc tuning), also the systemd unit's. */
export const DEPLOYED_ENV = deployed.env

/**
 * Builds the bundle from the current sources exactly as the package's `build` script does, unless the run built
 * it already (tools/bundle/shipped.mjs `bundlesBuilt`).
 */
export const buildBundle = (): void => {
  shippedBundle(PACKAGE_DIR)
}

export const JOURNAL_REMOTE = [
  "/lib/systemd/systemd-journal-remote",
  "/usr/lib/systemd/systemd-journal-remote"
].find((p) => existsSync(p))

/**
 * /proc/bus/pci/devices with an NVIDIA H100 (vendor 10de) bound to the nvidia driver (format: bus/devfn,
 * vendor+device, irq, 7 BARs, 7 sizes, driver): what makes the agent start its NVIDIA monitor.
 */
export const H100_PCI_DEVICES = `5300\t10de2330\t0\t${Array.from({ length: 14 }, () => "0").join("\t")}\tnvidia\n`

export interface FakeHost {
  readonly root: string
  write(rel: string, content: string): void
  /** Writes the agent's config file (YAML) into the host root; returns its path for `--config`. */
  writeConfig(yaml: string): string
  remove(rel: string): void
  setBootId(id: string): void
  appendKmsg(text: string): void
  writeJournal(identifier: string, message: string): void
  cleanup(): void
}

let kmsgSeq = 0
let journalFiles = 0

export const makeFakeHost = (bootId: string): FakeHost => {
  const root = mkdtempSync(join(tmpdir(), "nodemend-agent-it-"))
  const write = (rel: string, content: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true })
    writeFileSync(join(root, rel), content)
  }
  write("proc/sys/kernel/random/boot_id", `${bootId}\n`)
  write("proc/stat", `cpu 0 0 0 0\nbtime ${Math.floor(Date.now() / 1000) - 3600}\n`)
  write("proc/uptime", "3600.00 3600.00\n")
  write("proc/1/comm", "systemd\n")
  write("proc/1/stat", `1 (systemd) S ${Array.from({ length: 50 }, () => "0").join(" ")}\n`)
  write("proc/sys/net/ipv4/ip_forward", "1\n")
  write("sys/class/net/lo/flags", "0x49\n")
  write("sys/class/net/lo/operstate", "unknown\n")
  write("sys/class/net/lo/address", "00:00:00:00:00:00\n")
  write("dev/kmsg", "")
  mkdirSync(join(root, "var/log/journal"), { recursive: true })
  return {
    root,
    write,
    writeConfig: (yaml) => {
      write("agent.yaml", yaml)
      return join(root, "agent.yaml")
    },
    remove: (rel) => rmSync(join(root, rel), { recursive: true, force: true }),
    setBootId: (id) => write("proc/sys/kernel/random/boot_id", `${id}\n`),
    appendKmsg: (text) => {
      const usec = Math.round(3600e6 + kmsgSeq * 1000)
      appendFileSync(join(root, "dev/kmsg"), `4,${++kmsgSeq},${usec},-;${text}\n`)
    },
    writeJournal: (identifier, message) => {
      if (JOURNAL_REMOTE === undefined) throw new Error("systemd-journal-remote is not installed")
      const us = BigInt(Date.now()) * 1000n
      const entry = [
        `__REALTIME_TIMESTAMP=${us}`,
        "__MONOTONIC_TIMESTAMP=1000",
        "_BOOT_ID=0123456789abcdef0123456789abcdef",
        `SYSLOG_IDENTIFIER=${identifier}`,
        `MESSAGE=${message}`,
        ""
      ].join("\n")
      execFileSync(
        JOURNAL_REMOTE,
        [`--output=${join(root, "var/log/journal", `it-${++journalFiles}.journal`)}`, "-"],
        {
          input: `${entry}\n`,
          stdio: ["pipe", "ignore", "ignore"]
        }
      )
    },
    cleanup: () => rmSync(root, { recursive: true, force: true })
  }
}

export interface RunningAgent {
  readonly child: ChildProcess
  readonly output: () => string
  readonly stop: () => Promise<number | null>
  readonly exited: Promise<number | null>
}

export const startAgent = (args: {
  readonly nodeName: string
  /** Default: the test cluster's (kubeconfigPath()). */
  readonly kubeconfig?: string
  readonly hostRoot: string
  readonly config?: string
  readonly extraArgs?: readonly string[]
  readonly env?: Readonly<Record<string, string>>
  /**
   * Run the built bundle (buildBundle first) as deployed, instead of the sources. Default: where the run built
   * the bundles (bundlesBuilt).
   */
  readonly bundle?: boolean
}): RunningAgent => {
  const bundle = args.bundle ?? bundlesBuilt()
  const argv = [
    ...(bundle
      ? [...DEPLOYED_NODE_FLAGS, BUNDLE]
      : ["--conditions=source", join(PACKAGE_DIR, "src/main.ts")]),
    "--node-name",
    args.nodeName,
    "--kubeconfig",
    args.kubeconfig ?? kubeconfigPath(),
    "--host-root",
    args.hostRoot,
    "--health-address",
    "127.0.0.1:0",
    ...(args.config === undefined ? [] : ["--config", args.config]),
    ...(args.extraArgs ?? [])
  ]
  return spawnNode(argv, bundle ? { ...DEPLOYED_ENV, ...args.env } : args.env)
}

/** Spawns Node.js (this process's binary) with `argv` in the package dir, collecting stdout and stderr. */
export const spawnNode = (
  argv: readonly string[],
  env: Readonly<Record<string, string>> = {}
): RunningAgent => {
  const child = spawn(NODE, argv, {
    cwd: PACKAGE_DIR,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  child.stdout?.on("data", (b: Buffer) => {
    out += b.toString()
  })
  child.stderr?.on("data", (b: Buffer) => {
    out += b.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return {
    child,
    output: () => out,
    exited,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM")
      return exited
    }
  }
}

/** A catch handler for a wait on the agent's effect: the error carries the tail of the agent's output. */
export const failWithAgentOutput =
  (agent: RunningAgent | undefined) =>
  (e: unknown): never => {
    throw new Error(`${(e as Error).message}\nagent output:\n${agent?.output().slice(-4000)}`)
  }
