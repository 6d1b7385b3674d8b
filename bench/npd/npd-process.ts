/**
 * node-problem-detector as the side-by-side benches run it: the built binary (build.mjs) for one kwok Node of the
 * local cluster, its system log monitor configs given, Prometheus metrics on a free local port; and what the benches
 * read from a process: metric sums, CPU and peak RSS (with the children, e.g. the agent's journalctl).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createServer } from "node:net"

export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

/** The sum of every series whose line starts with `prefix` (a metric name, or a name with its first labels). */
export const sumMetric = (metrics: string, prefix: string) =>
  metrics
    .split("\n")
    .filter((l) => l.startsWith(prefix))
    .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(" ") + 1)), 0)

export interface NpdProcess {
  readonly proc: ChildProcess
  readonly output: () => string
  /** Its /metrics text, "" while it does not answer. */
  metrics(): Promise<string>
  stop(): void
}

export const spawnNpd = async (
  binary: string,
  {
    node,
    server,
    kubeconfig,
    configs
  }: { node: string; server: string; kubeconfig: string; configs: readonly string[] }
): Promise<NpdProcess> => {
  const port = await freePort()
  const proc = spawn(
    binary,
    [
      `--hostname-override=${node}`,
      `--apiserver-override=${server}?inClusterConfig=false&auth=${kubeconfig}`,
      `--config.system-log-monitor=${configs.join(",")}`,
      "--port=0",
      `--prometheus-port=${port}`,
      "--prometheus-address=127.0.0.1"
    ],
    { stdio: ["ignore", "pipe", "pipe"] }
  )
  let out = ""
  const keep = (b: Buffer) => {
    out = (out + b.toString()).slice(-20_000)
  }
  proc.stdout!.on("data", keep)
  proc.stderr!.on("data", keep)
  return {
    proc,
    output: () => out,
    metrics: () =>
      fetch(`http://127.0.0.1:${port}/metrics`).then(
        (r) => r.text(),
        () => ""
      ),
    stop: () => {
      proc.kill("SIGTERM")
    }
  }
}

const CLK_TCK = 100

const descendants = (pid: number): number[] => {
  let children: number[] = []
  try {
    for (const task of readdirSync(`/proc/${pid}/task`))
      children = children.concat(
        readFileSync(`/proc/${pid}/task/${task}/children`, "utf8")
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map(Number)
      )
  } catch {
    return []
  }
  return children.flatMap((c) => [c, ...descendants(c)])
}

const ownUsage = (pid: number): { cpuSeconds: number; peakRssMiB: number } => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
    return {
      cpuSeconds: (Number(rest[11]) + Number(rest[12])) / CLK_TCK,
      peakRssMiB: Number(hwm ?? 0) / 1024
    }
  } catch {
    return { cpuSeconds: 0, peakRssMiB: 0 } // exited meanwhile
  }
}

/** CPU seconds (utime + stime) and peak RSS (VmHWM) of a process plus its live descendants, summed. */
export const treeUsage = (pid: number): { cpuSeconds: number; peakRssMiB: number } =>
  [pid, ...descendants(pid)]
    .map(ownUsage)
    .reduce(
      (a, b) => ({ cpuSeconds: a.cpuSeconds + b.cpuSeconds, peakRssMiB: a.peakRssMiB + b.peakRssMiB }),
      { cpuSeconds: 0, peakRssMiB: 0 }
    )
