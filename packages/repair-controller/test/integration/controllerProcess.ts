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

/** The port the controller says it bound (`--port 0`: the kernel picks a free one; no other process can take it first). */
const LISTENING = /Listening on http:\/\/[^"\s]*:(\d+)/

/**
 * Starts the controller on a port of the kernel's choosing and resolves once it listens there (port: the bound one),
 * or once it has exited before it could (port 0: the caller sees the exit and its logs).
 */
export async function startControllerProcess(
  kubeconfig: string,
  config: unknown,
  identity = `ctl-${Math.random().toString(36).slice(2, 8)}`,
  options: StartOptions = {}
): Promise<ControllerProcess> {
  const path = writeConfig(config)
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
      "0"
    ],
    { cwd: PKG, stdio: ["ignore", "pipe", "pipe"] }
  )
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`controller ${identity} did not listen within 60 s:\n${out.slice(-4000)}`)),
      60_000
    )
    let listening = false
    const seen = (d: Buffer) => {
      out += d.toString()
      const m = listening ? null : LISTENING.exec(out)
      if (m === null) return
      listening = true
      clearTimeout(timer)
      resolve(Number(m[1]))
    }
    proc.stdout?.on("data", seen)
    proc.stderr?.on("data", seen)
    void exited.then(() => {
      clearTimeout(timer)
      resolve(0)
    })
  })
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
      const ask = () => fetch(`http://127.0.0.1:${port}${p}`)
      // A reused keep-alive socket that the controller closed as the request went out (its keep-alive timer fires
      // first when its event loop was busy past the timeout) fails with ECONNRESET: a GET is asked again once, as
      // HTTP clients do for idempotent requests.
      const res = await ask().catch(ask)
      return { status: res.status, body: await res.text() }
    }
  }
}
