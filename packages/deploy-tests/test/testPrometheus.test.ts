// The test Prometheus' pure parts (tools/cluster/prometheus.mjs): the fake cloud's static scrape job beside the
// PodMonitors' jobs, and scaleFor, which changes nothing of the shipped rules but `for:`.
import { describe, expect, it } from "vitest"
import {
  FAKE_CLOUD_JOB,
  prometheusConfig,
  readPodMonitors,
  ruleFile,
  scaleFor,
  targetsFile
} from "../../../tools/cluster/prometheus.mjs"

interface Rule {
  readonly alert?: string
  readonly record?: string
  readonly for?: string
}
const rulesOf = (f: { groups: unknown[] }) => (f.groups as { rules: Rule[] }[]).flatMap((g) => g.rules)

describe("the test Prometheus' config", () => {
  it("scrapes every PodMonitor endpoint and the fake cloud (a static job, its targets from a file)", () => {
    const config = prometheusConfig({ rulesPath: "/r.yaml", targetsDir: "/t" }) as {
      scrape_configs: { job_name: string; file_sd_configs: { files: string[] }[]; metrics_path: string }[]
    }
    const endpoints = readPodMonitors().flatMap(
      (m) => (m as { spec: { podMetricsEndpoints: unknown[] } }).spec.podMetricsEndpoints
    )
    expect(config.scrape_configs).toHaveLength(endpoints.length + 1)
    const fake = config.scrape_configs.find((j) => j.job_name === FAKE_CLOUD_JOB)
    expect(fake?.metrics_path).toBe("/metrics")
    expect(fake?.file_sd_configs[0]?.files).toEqual([targetsFile("/t", FAKE_CLOUD_JOB)])
  })
})

describe("scaleFor", () => {
  it("divides every alert's for: (15m -> 15s by 60) and changes nothing else", () => {
    const shipped = ruleFile()
    const scaled = scaleFor(shipped, 60)
    const before = rulesOf(shipped)
    const after = rulesOf(scaled)
    expect(before.filter((r) => r.for !== undefined).length).toBeGreaterThan(3)
    expect(after.find((r) => r.alert === "NodemendZoneStoodDown")?.for).toBe("15s")
    expect(after.find((r) => r.alert === "NodemendStoodDownForZonalShift")?.for).toBe("30s")
    const withoutFor = (rs: Rule[]) => rs.map(({ for: _, ...rest }) => rest)
    expect(withoutFor(after)).toEqual(withoutFor(before))
    expect(after.map((r) => r.for === undefined)).toEqual(before.map((r) => r.for === undefined))
  })

  it("refuses a for: it cannot read", () => {
    expect(() => scaleFor({ groups: [{ rules: [{ alert: "A", for: "1d" }] }] }, 60)).toThrow(/cannot scale/)
  })
})
