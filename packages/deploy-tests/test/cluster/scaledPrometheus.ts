// A second, short-lived Prometheus for one test: the same scrape jobs and target files as the cluster's, and the
// shipped rules with only `for:` scaled down (scaleFor), generated here from deploy/monitoring/nodemend-alerts.yaml.
// It shows an alert whose shipped `for:` is 15 or 30 minutes go from pending to firing; the cluster's Prometheus
// keeps the rules as shipped.
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { waitFor } from "@nodemend/cluster-harness"
import { stringify } from "yaml"
import {
  PROMETHEUS_BIN_DIR,
  prometheusConfig,
  ruleFile,
  scaleFor
} from "../../../../tools/cluster/prometheus.mjs"
import { freePort } from "./binaries.ts"

export interface ScaledPrometheus {
  readonly url: string
  readonly stop: () => Promise<void>
}

export const startScaledPrometheus = async (
  targetsDir: string,
  divisor: number
): Promise<ScaledPrometheus> => {
  const dir = mkdtempSync(join(tmpdir(), "nodemend-scaled-prometheus-"))
  const rulesPath = join(dir, "rules.yaml")
  writeFileSync(rulesPath, stringify(scaleFor(ruleFile(), divisor)))
  const configPath = join(dir, "prometheus.yml")
  writeFileSync(configPath, stringify(prometheusConfig({ rulesPath, targetsDir })))
  const port = await freePort()
  const proc = spawn(
    join(PROMETHEUS_BIN_DIR, "prometheus"),
    [
      `--config.file=${configPath}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn"
    ],
    { stdio: ["ignore", "ignore", "pipe"] }
  )
  let err = ""
  proc.stderr?.on("data", (d: Buffer) => (err += d.toString()))
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()))
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM")
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
  await waitFor(
    "the scaled Prometheus ready",
    async () => ((await fetch(`${url}/-/ready`).catch(() => undefined))?.ok ? true : undefined),
    { timeoutMs: 30_000, intervalMs: 200 }
  ).catch(async (e: unknown) => {
    await stop()
    throw new Error(`${(e as Error).message}\n${err}`)
  })
  return { url, stop }
}
