/**
 * Runs the real nodemend-controller binary as a child process against the test cluster, so tests can
 * SIGKILL it mid-repair and start it again: the sources (type stripping) or the shipped bundle, which is
 * built from the current sources on first use exactly as `npm run build` builds it (or, in `npm test`'s lanes,
 * was built for the run and is the default: tools/bundle/shipped.mjs `bundlesBuilt`).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { stringify } from "yaml"
import { bundlesBuilt, deployedRuntime, shippedBundle } from "../../../../tools/bundle/shipped.mjs"

const PKG = fileURLToPath(new URL("../..", import.meta.url))
const NODE = join(PKG, "../../node_modules/.bin/node")
export const BUNDLE = join(PKG, "dist/nodemend-controller.mjs")

let bundleBuilt = false
/** dist/nodemend-controller.mjs, built once per test process (the package's `build` script) unless built for the run. */
export const ensureBundle = (): string => {
  if (!bundleBuilt) {
    shippedBundle(PKG)
    bundleBuilt = true
  }
  return BUNDLE
}

/** The V8 flags the Deployment runs the controller with (deploy/controller/deployment.yaml `command`). */
export const deployedNodeFlags = (): string[] => [...deployedRuntime("controller/deployment.yaml").flags]

export interface StartOptions {
  /** Run the bundle (what ships) instead of the sources. Default: where the run built the bundles (bundlesBuilt). */
  readonly bundle?: boolean
  /** V8 flags before the script (e.g. deployedNodeFlags()). */
  readonly nodeFlags?: ReadonlyArray<string>
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.listen(0, "127.0.0.1", () => {
      const a = s.address()
      const port = typeof a === "object" && a !== null ? a.port : 0
      s.close(() => resolve(port))
    })
    s.on("error", reject)
  })

export interface ControllerProcess {
  readonly identity: string
  readonly port: number
  readonly proc: ChildProcess
  readonly logs: () => string
  readonly kill: (signal?: NodeJS.Signals) => Promise<void>
  readonly get: (path: string) => Promise<{ status: number; body: string }>
}

/** Kills every controller in `running` and empties it; after a failed test, first prints each one's last logs. */
export const killControllers = async (running: ControllerProcess[], testFailed: boolean): Promise<void> => {
  for (const p of running.splice(0)) {
    if (testFailed) console.log(`--- ${p.identity} logs ---\n${p.logs().slice(-6000)}`)
    await p.kill("SIGKILL")
  }
}

export const writeConfig = (config: unknown): string => {
  const dir = mkdtempSync(join(tmpdir(), "nodemend-ctl-"))
  const path = join(dir, "controller.yaml")
  writeFileSync(path, stringify(config))
  return path
}

async function spawnController(
  kubeconfig: string,
  config: unknown,
  identity = `ctl-${Math.random().toString(36).slice(2, 8)}`,
  options: StartOptions = {}
): Promise<ControllerProcess> {
  const path = writeConfig(config)
  const port = await freePort()
  let out = ""
  const proc = spawn(
    NODE,
    [
      ...(options.nodeFlags ?? []),
      ...((options.bundle ?? bundlesBuilt())
        ? [ensureBundle()]
        : ["--conditions=source", join(PKG, "src/main.ts")]),
      "--config",
      path,
      "--kubeconfig",
      kubeconfig,
      "--identity",
      identity,
      "--port",
      String(port)
    ],
    { cwd: PKG, stdio: ["ignore", "pipe", "pipe"] }
  )
  proc.stdout?.on("data", (d: Buffer) => {
    out += d.toString()
  })
  proc.stderr?.on("data", (d: Buffer) => {
    out += d.toString()
  })
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()))
  return {
    identity,
    port,
    proc,
    logs: () => out,
    kill: async (signal = "SIGTERM") => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal)
      await exited
    },
    get: async (p) => {
      const res = await fetch(`http://127.0.0.1:${port}${p}`)
      return { status: res.status, body: await res.text() }
    }
  }
}

/** Whether the controller lost its port: another lane's process bound freePort's port before it did. */
const lostPort = async (p: ControllerProcess): Promise<boolean> => {
  const until = Date.now() + 15_000
  while (Date.now() < until) {
    if (p.logs().includes("Listening on")) return false
    if (p.proc.exitCode !== null || p.proc.signalCode !== null) return p.logs().includes("EADDRINUSE")
    await new Promise((r) => setTimeout(r, 50))
  }
  return false
}

/** Starts the controller; again on another port when the one freePort gave was taken before it could bind it. */
export async function startControllerProcess(
  kubeconfig: string,
  config: unknown,
  identity = `ctl-${Math.random().toString(36).slice(2, 8)}`,
  options: StartOptions = {}
): Promise<ControllerProcess> {
  for (let attempt = 1; ; attempt++) {
    const p = await spawnController(kubeconfig, config, identity, options)
    if (attempt === 3 || !(await lostPort(p))) return p
  }
}
