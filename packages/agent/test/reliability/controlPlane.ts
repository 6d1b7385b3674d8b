/**
 * A cluster of a test file's own whose control-plane processes the test may crash and start again: the
 * mechanism of packages/repair-controller/test/reliability/apiRestart.rtest.ts (the shared development cluster
 * is never restarted). `tools/cluster/cluster.mjs up --state-dir <dir> --no-karpenter`; each component's
 * command line is read from /proc once it is up, so a restart is the same process again, as systemd or the
 * kubelet would start it.
 */
import { execFileSync, spawn } from "node:child_process"
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { waitFor } from "@nodemend/cluster-harness"

const REPO = fileURLToPath(new URL("../../../..", import.meta.url))
const NODE = join(REPO, "node_modules/.bin/node")

export const COMPONENTS = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kwok"
] as const
export type Component = (typeof COMPONENTS)[number]

export interface ControlPlane {
  readonly kubeconfig: string
  /** SIGKILLs the component (a crash) and waits until it is gone; `launch` starts it again. */
  readonly crash: (name: "kube-apiserver" | "etcd") => Promise<void>
  readonly launch: (name: Component) => void
  /** Starts again every component that exited (the controller-manager and scheduler exit when they cannot renew their leases). */
  readonly revive: () => Component[]
  readonly down: () => void
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const controlPlaneUp = (stateDir: string): ControlPlane => {
  const state = join(REPO, stateDir)
  const cluster = (...args: string[]) =>
    execFileSync(NODE, [join(REPO, "tools/cluster/cluster.mjs"), ...args, "--state-dir", state], {
      env: { ...process.env, NODEMEND_KARPENTER: "0" },
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 600_000
    })
  // From scratch: a cluster left behind by an interrupted run may have been crashed part way.
  cluster("down", "--purge")
  cluster("up", "--no-karpenter")
  const pidOf = (name: Component) => Number(readFileSync(join(state, "pids", `${name}.pid`), "utf8"))
  /** Gone, or a zombie (nothing here reaps the detached control plane's processes). */
  const dead = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") === true
    } catch {
      return true
    }
  }
  const commandLines = new Map<Component, string[]>(
    COMPONENTS.map((n) => [
      n,
      readFileSync(`/proc/${pidOf(n)}/cmdline`, "utf8")
        .split("\u0000")
        .filter(Boolean)
    ])
  )
  const launch = (name: Component) => {
    const argv = commandLines.get(name) ?? []
    const fd = openSync(join(state, "logs", `${name}.log`), "a")
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: state,
      detached: true,
      stdio: ["ignore", fd, fd],
      env: { ...process.env, KUBECONFIG: "" }
    })
    closeSync(fd)
    child.unref()
    writeFileSync(join(state, "pids", `${name}.pid`), String(child.pid))
  }
  return {
    kubeconfig: join(state, "kubeconfig"),
    launch,
    crash: async (name) => {
      const pid = pidOf(name)
      process.kill(pid, "SIGKILL")
      await waitFor(`${name} stopped`, () => (dead(pid) ? true : undefined), {
        timeoutMs: 30_000,
        intervalMs: 50
      })
    },
    revive: () => {
      const revived = COMPONENTS.filter((n) => dead(pidOf(n)))
      for (const n of revived) launch(n)
      return revived
    },
    down: () => {
      cluster("down")
    }
  }
}

export { sleep }
