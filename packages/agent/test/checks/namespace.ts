/**
 * A throwaway "host" for real-command tests: fresh network, mount and PID namespaces made with `unshare`,
 * with /sys remounted so /sys/class/net shows the new network namespace, and namespace-probe.ts running
 * there as PID 1 (so /proc/1/mountinfo is the namespace's own). Tests change the namespace with real
 * commands (`ns.sh("ip link ...")` runs through nsenter) and run a production check in it tick by tick.
 * Everything in it (links, rules, routes, mounts, loop devices) goes away when the probe is killed.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn, spawnSync } from "node:child_process"
import { readFileSync, readlinkSync } from "node:fs"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import type { Finding } from "../../src/model.ts"
import { recordProduced } from "../reasons/produced-reasons.ts"

const PROBE = fileURLToPath(new URL("./namespace-probe.ts", import.meta.url))

/** Whether `name` resolves on PATH. */
export const hasCommand = (name: string): boolean =>
  spawnSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" }).status === 0

const UNSHARE = [
  "--net",
  "--mount",
  "--pid",
  "--fork",
  "--kill-child",
  "--mount-proc",
  "--propagation",
  "private"
]

/** Whether `script` succeeds in throwaway namespaces (what the kernel and the tools allow here). */
export const worksInNamespace = (script: string): boolean =>
  hasCommand("unshare") &&
  spawnSync("unshare", [...UNSHARE, "sh", "-c", script], { stdio: "ignore", timeout: 20_000 }).status === 0

/** Whether this machine lets us make the namespaces (root with CAP_SYS_ADMIN, unshare and nsenter present). */
export const namespacesPermitted: boolean =
  hasCommand("nsenter") && worksInNamespace("mount -t sysfs sysfs /sys")

export interface LogLine {
  readonly level: string
  readonly message: unknown
}

export interface TickResult {
  readonly findings: readonly Finding[]
  readonly logs: readonly LogLine[]
}

export interface Namespace {
  /** Runs a shell script inside the namespaces; resolves its stdout, rejects on a non-zero exit. */
  sh(script: string): Promise<string>
  /** Builds `check` with the production registry from `config` (agent config YAML as an object). */
  build(check: string, options?: { config?: unknown; filesRoot?: string }): Promise<void>
  tick(nowMs: number): Promise<TickResult>
  /** Serves `body` at http://127.0.0.1:<port><path> inside the namespace (from the probe process). */
  serve(port: number, path: string, body: string): Promise<void>
  close(): void
}

/** Starts the namespaces and the probe; resolves once the probe answers from inside them. */
export const startNamespace = async (): Promise<Namespace> => {
  const child: ChildProcessWithoutNullStreams = spawn(
    "unshare",
    [
      ...UNSHARE,
      "sh",
      "-c",
      'mount -t sysfs sysfs /sys && exec "$0" --conditions=source "$1"',
      process.execPath,
      PROBE
    ],
    { stdio: ["pipe", "pipe", "pipe"] }
  )
  let stderr = ""
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString()
  })
  const waiting: ((line: string | undefined) => void)[] = []
  createInterface({ input: child.stdout }).on("line", (line) => waiting.shift()?.(line))
  child.on("exit", () => {
    for (const w of waiting.splice(0)) w(undefined)
  })
  const request = (req: object): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      waiting.push((line) => {
        if (line === undefined) return reject(new Error(`namespace probe exited: ${stderr}`))
        const answer = JSON.parse(line) as Record<string, unknown>
        if (typeof answer.error === "string") reject(new Error(answer.error))
        else resolve(answer)
      })
      child.stdin.write(`${JSON.stringify(req)}\n`)
    })
  let probePid = 0
  const ns: Namespace = {
    sh: (script) =>
      new Promise((resolve, reject) => {
        execFile(
          "nsenter",
          ["--target", String(probePid), "--net", "--mount", "--pid", "sh", "-c", script],
          { timeout: 20_000 },
          (error, stdout, err) =>
            error === null ? resolve(stdout) : reject(new Error(`${script}: ${error.message}${err}`))
        )
      }),
    build: async (check, options = {}) => {
      await request({ op: "build", check, config: options.config ?? {}, filesRoot: options.filesRoot ?? "/" })
    },
    tick: async (nowMs) => {
      const r = (await request({ op: "tick", nowMs })) as unknown as TickResult
      recordProduced(r.findings)
      return r
    },
    serve: async (port, path, body) => {
      await request({ op: "serve", port, path, body })
    },
    close: () => {
      child.stdin.end()
      child.kill("SIGKILL")
    }
  }
  try {
    await request({ op: "ping" })
    // The probe is unshare's only child (sh exec'd node). Make sure it really is in other namespaces
    // before any test command runs there: a mistake here would change this machine's own network.
    probePid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim())
    for (const kind of ["net", "mnt", "pid"])
      if (readlinkSync(`/proc/${probePid}/ns/${kind}`) === readlinkSync(`/proc/self/ns/${kind}`))
        throw new Error(`unshare did not make a new ${kind} namespace`)
  } catch (e) {
    ns.close()
    throw e
  }
  return ns
}
