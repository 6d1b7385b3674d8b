// The binaries as the cluster tests run them: from their sources (Node's type stripping), on a free port.
import { type ChildProcess, spawn } from "node:child_process"
import { createServer } from "node:net"
import { join } from "node:path"
import { REPO_ROOT } from "../../../../tools/cluster/versions.mjs"

const NODE = join(REPO_ROOT, "node_modules", ".bin", "node")

export interface Binary {
  readonly proc: ChildProcess
  readonly port: number
  readonly output: () => string
  readonly stop: () => Promise<void>
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.listen(0, "127.0.0.1", () => {
      const a = s.address()
      s.close(() => resolve(typeof a === "object" && a !== null ? a.port : 0))
    })
    s.on("error", reject)
  })

/** Starts `main` with `args` (and `env` over this process' environment), pushed onto `running` (the caller stops them all after its tests). */
export const spawnSourceBinary = (
  running: Binary[],
  main: string,
  args: ReadonlyArray<string>,
  port: number,
  env: Readonly<Record<string, string>> = {}
): Binary => {
  const proc = spawn(NODE, ["--conditions=source", join(REPO_ROOT, main), ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  proc.stdout?.on("data", (d: Buffer) => (out += d.toString()))
  proc.stderr?.on("data", (d: Buffer) => (out += d.toString()))
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()))
  const binary: Binary = {
    proc,
    port,
    output: () => out,
    // SIGKILL: a kwok replacement still waiting in the controller must never be created after the test.
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL")
      await exited
    }
  }
  running.push(binary)
  return binary
}
