// A real Prometheus next to the local cluster (`cluster:up --prometheus`; npm test's cluster phase starts it):
// Debian's `prometheus` (tools/prereqs.mjs), with nodemend's rules (deploy/monitoring/nodemend-alerts.yaml) loaded and
// one scrape job per PodMonitor of deploy/monitoring/podmonitors.yaml, with its path and relabelings and the
// target labels the Prometheus Operator adds (namespace, pod, container, endpoint). The cluster's workloads are
// processes, not pods with addresses, so the targets come from files (file_sd) that tests write with the pod's
// meta labels (registerTarget): the relabelings then work on them as on a pod Kubernetes discovered. Scrapes and
// rule evaluations every second (the PodMonitors say 30 s; a test cannot wait that long), everything else as
// shipped: an alert with `for: 15m` is pending for 15 minutes here too. One job more than the chart describes: the
// fake cloud (a test tool, not in the chart, so no PodMonitor) is scraped by a static job, FAKE_CLOUD_JOB, its
// address also from a file (writeStaticTargets), since its port is chosen when a test starts it.
//
// prometheusConfig() and ruleFile() are pure; startPrometheus() runs it under the cluster's state dir.
import { renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parseAllDocuments, parse as parseYaml, stringify } from "yaml"
import { readFileSync } from "node:fs"
import { REPO_ROOT } from "./versions.mjs"

export const PROMETHEUS_BIN_DIR = "/usr/bin"
export const PODMONITORS_FILE = join(REPO_ROOT, "deploy", "monitoring", "podmonitors.yaml")
export const RULES_FILE = join(REPO_ROOT, "deploy", "monitoring", "nodemend-alerts.yaml")
export const INTERVAL = "1s"

const camelToSnake = (s) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

/** A PodMonitor relabeling (camelCase, the CRD's) as a Prometheus relabel_config (snake_case). */
export const relabelConfig = (r) =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [camelToSnake(k), v]))

/** The PodMonitors of podmonitors.yaml. */
export const readPodMonitors = (path = PODMONITORS_FILE) =>
  parseAllDocuments(readFileSync(path, "utf8"))
    .map((d) => d.toJSON())
    .filter((o) => o?.kind === "PodMonitor")

/** The file a PodMonitor's targets are listed in (file_sd). */
export const targetsFile = (targetsDir, monitor) => join(targetsDir, `${monitor}.json`)

/** The scrape job the Prometheus Operator would make of endpoint `i` of `monitor`, its targets from a file. */
export const scrapeJob = (monitor, i, targetsDir) => {
  const e = monitor.spec.podMetricsEndpoints[i]
  const { namespace, name } = monitor.metadata
  return {
    job_name: `podMonitor/${namespace}/${name}/${i}`,
    scrape_interval: INTERVAL,
    scrape_timeout: INTERVAL,
    metrics_path: e.path ?? "/metrics",
    file_sd_configs: [{ files: [targetsFile(targetsDir, name)], refresh_interval: INTERVAL }],
    relabel_configs: [
      // As the operator: only the pods the selector matches, on the endpoint's port (the file lists only those).
      { source_labels: ["__meta_kubernetes_pod_container_port_name"], regex: e.port, action: "keep" },
      { source_labels: ["__meta_kubernetes_namespace"], target_label: "namespace" },
      { source_labels: ["__meta_kubernetes_pod_container_name"], target_label: "container" },
      { source_labels: ["__meta_kubernetes_pod_name"], target_label: "pod" },
      { target_label: "job", replacement: `${namespace}/${name}` },
      { target_label: "endpoint", replacement: e.port },
      ...(e.relabelings ?? []).map(relabelConfig)
    ]
  }
}

/** The fake cloud's job (packages/fake-cloud serves /metrics): static, labelled job="nodemend-fake-cloud". */
export const FAKE_CLOUD_JOB = "nodemend-fake-cloud"

/** A job with no PodMonitor: its targets (addresses only) from a file, scraped as often as the others. */
export const staticJob = (job, targetsDir) => ({
  job_name: job,
  scrape_interval: INTERVAL,
  scrape_timeout: INTERVAL,
  metrics_path: "/metrics",
  file_sd_configs: [{ files: [targetsFile(targetsDir, job)], refresh_interval: INTERVAL }]
})

/** prometheus.yml: the rule file, one job per PodMonitor endpoint, and the fake cloud's static job. */
export const prometheusConfig = ({ rulesPath, targetsDir, monitors = readPodMonitors() }) => ({
  global: { scrape_interval: INTERVAL, evaluation_interval: INTERVAL },
  rule_files: [rulesPath],
  scrape_configs: [
    ...monitors.flatMap((m) => m.spec.podMetricsEndpoints.map((_, i) => scrapeJob(m, i, targetsDir))),
    staticJob(FAKE_CLOUD_JOB, targetsDir)
  ]
})

/** The PrometheusRule's groups as a Prometheus rule file. */
export const ruleFile = (path = RULES_FILE) => ({ groups: parseYaml(readFileSync(path, "utf8")).spec.groups })

const DURATION = /^(\d+)(s|m|h)$/
const SECONDS = { s: 1, m: 60, h: 3600 }

/**
 * A rule file as `file`, every alert's `for:` divided by `divisor` (whole seconds, at least 1 s), nothing else
 * changed: for a test that shows an alert with a long `for:` going from pending to firing (the shipped values stay
 * as they are; this copy exists only in that test).
 */
export const scaleFor = (file, divisor) => ({
  groups: file.groups.map((g) => ({
    ...g,
    rules: g.rules.map((r) => {
      if (r.for === undefined) return r
      const m = DURATION.exec(r.for)
      if (!m) throw new Error(`cannot scale for: ${JSON.stringify(r.for)} of ${r.alert}`)
      return { ...r, for: `${Math.max(1, Math.round((Number(m[1]) * SECONDS[m[2]]) / divisor))}s` }
    })
  }))
})

/** Writes the config, the rule file and empty target files under `dir`; returns the paths and the arguments. */
export const prepare = (dir, port) => {
  const targetsDir = join(dir, "targets")
  const rulesPath = join(dir, "rules.yaml")
  const monitors = readPodMonitors()
  writeFileSync(rulesPath, stringify(ruleFile()))
  for (const name of [...monitors.map((m) => m.metadata.name), FAKE_CLOUD_JOB])
    writeFileSync(targetsFile(targetsDir, name), "[]\n")
  const configPath = join(dir, "prometheus.yml")
  writeFileSync(configPath, stringify(prometheusConfig({ rulesPath, targetsDir, monitors })))
  return {
    targetsDir,
    configPath,
    args: [
      `--config.file=${configPath}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--storage.tsdb.retention.time=1d",
      // On loopback only: a test starts from an empty TSDB (deleteAllSeries), so what an earlier run on the same
      // cluster left in the alerts' windows (up to an hour) does not count against it.
      "--web.enable-admin-api",
      "--log.level=warn"
    ]
  }
}

/** Deletes every series (the admin API): recording rules and alerts start again from nothing. */
export const deleteAllSeries = async (url) => {
  const res = await fetch(
    `${url}/api/v1/admin/tsdb/delete_series?match[]=${encodeURIComponent('{__name__=~".+"}')}`,
    {
      method: "POST"
    }
  )
  if (res.status !== 204) throw new Error(`delete_series: ${res.status} ${await res.text()}`)
}

/**
 * Lists `targets` for `monitor` (replacing what was there): each an address (host:port) and the pod it stands
 * for.
 */
export const writeTargets = (targetsDir, monitor, targets) =>
  writeTargetGroups(
    targetsFile(targetsDir, monitor),
    targets.map((t) => ({
      targets: [t.address],
      labels: {
        __meta_kubernetes_namespace: t.namespace,
        __meta_kubernetes_pod_name: t.pod,
        __meta_kubernetes_pod_node_name: t.node ?? "",
        __meta_kubernetes_pod_container_name: t.container ?? monitor,
        __meta_kubernetes_pod_container_port_name: t.port
      }
    }))
  )

/** Lists `addresses` (host:port) as the targets of a static job (staticJob), replacing what was there. */
export const writeStaticTargets = (targetsDir, job, addresses) =>
  writeTargetGroups(
    targetsFile(targetsDir, job),
    addresses.length === 0 ? [] : [{ targets: addresses, labels: {} }]
  )

/** Written whole and renamed into place, so Prometheus never reads half a file. */
const writeTargetGroups = (path, groups) => {
  const tmp = `${path}.tmp`
  writeFileSync(tmp, `${JSON.stringify(groups, null, 2)}\n`)
  renameSync(tmp, path)
}
