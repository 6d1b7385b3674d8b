/**
 * The inputs of the per-source side-by-side (source-rates.ts): for each log source node-problem-detector (NPD) has,
 * the lines both read, NPD's monitor config for it, and the end marker. "chatter" is benign lines of the source
 * (checked: neither the agent's rules nor NPD's match one); "storm" is the same with 1% fault lines: the agent's
 * cited fixtures of that source (test/fixtures) plus the lines NPD's rules for it match.
 *
 * - kmsg: the agent's `dmesg` (its /dev/kmsg, a regular file in its host root) and, for NPD, the same text as a
 *   syslog kern.log read by its shipped kernel monitor rules (config/kernel-monitor.json) through its filelog plugin
 *   (kernel-monitor-filelog.json's settings): NPD's kmsg plugin opens only the real /dev/kmsg.
 * - journal: systemd's own entries (SYSLOG_IDENTIFIER=systemd) in one journal file written by
 *   systemd-journal-remote and renamed into <host>/var/log/journal, read by both: the agent's `journal:systemd`
 *   (journalctl) and NPD's shipped systemd-monitor.json (journald plugin, its KubeletStart/ContainerdStart rules).
 *   NPD ships no log monitor for kubelet's own journal (its kubelet health is a custom plugin).
 * - file: the VPC CNI's ipamd.log (zap JSON), read by both: the agent's `file:` reader and NPD's filelog plugin.
 *   NPD ships no rule for any file the agent reads (its disk-log-message-filelog.json for /var/log/messages does
 *   not parse: a trailing comma), so NPD runs the agent's own rules for ipamd.log, translated (end-anchored as
 *   NPD anchors every pattern): the same rules on the same lines.
 * - pod logs: NPD has no equivalent (its log monitors read kmsg, journald or a file); not compared.
 */
import { BUILTIN_RULES, compileRules, type LogSourceId } from "../../packages/agent/src/rules/index.ts"
import { ALL_FAULT_LINES } from "../../packages/agent/test/fixtures/all-log-lines.ts"
import { BENIGN_TEMPLATES } from "../../packages/agent/bench/mixed-kernel-log.ts"
import { IPAMD_CHATTER, seededText } from "../../packages/agent/bench/seeded-text.ts"

export type SourceKind = "kmsg" | "journal" | "file"
export const AGENT_SOURCE: Record<SourceKind, LogSourceId> = {
  kmsg: "dmesg",
  journal: "journal:systemd",
  file: "file:/var/log/aws-routed-eni/ipamd.log"
}
export const IPAMD_LOG = "var/log/aws-routed-eni/ipamd.log"
/** The last line of every input; a bench rule added to NPD's config reports it (reason NodemendBenchEnd). */
export const END_MARKER = "nodemend-bench: end of input"
export const END_REASON = "NodemendBenchEnd"

const { rng, pick, fill } = seededText(0x5eed1234)

/** NPD's rules of a monitor config as JavaScript RegExps, end-anchored as NPD's log buffer matches them. */
const npdMatchers = (config: NpdMonitorConfig): RegExp[] =>
  config.rules.map((r) => new RegExp(`(?:${r.pattern.replace(/^\(\?i\)/, "")})$`))

export interface NpdMonitorConfig {
  readonly rules: readonly { readonly type: string; readonly reason: string; readonly pattern: string }[]
  readonly [key: string]: unknown
}

const SYSTEMD_CHATTER = [
  "Started session-{n}.scope - Session {n} of User ec2-user.",
  "session-{n}.scope: Deactivated successfully.",
  "Created slice kubepods-burstable-pod{h}.slice - libcontainer container kubepods-burstable-pod{h}.slice.",
  "Started cri-containerd-{h}.scope - libcontainer container {h}.",
  "cri-containerd-{h}.scope: Deactivated successfully.",
  "run-containerd-runc-k8s.io-{h}-runc.{h}.mount: Deactivated successfully.",
  "var-lib-kubelet-pods-{h}-volumes-kubernetes.io\\x7eprojected-kube\\x2dapi\\x2daccess\\x2d{h}.mount: Deactivated successfully.",
  "Starting logrotate.service - Rotate log files...",
  "logrotate.service: Deactivated successfully.",
  "Finished logrotate.service - Rotate log files.",
  "Starting sysstat-collect.service - system activity accounting tool...",
  "Finished sysstat-collect.service - system activity accounting tool."
]
/** systemd's start lines that NPD's systemd-monitor.json reports (KubeletStart, ContainerdStart), as systemd >= 250 writes them. */
const SYSTEMD_NPD_LINES = [
  "Started kubelet.service - Kubernetes Kubelet.",
  "Starting containerd.service - containerd container runtime..."
]

const ipamdLine = (msg: string, level = "info") =>
  JSON.stringify({ level, ts: new Date().toISOString(), caller: "ipamd/ipamd.go:651", msg })

/** The agent's rules of one source as an NPD monitor's temporary rules (NPD anchors each at the end: `.*` added). */
const translatedRules = (source: LogSourceId) =>
  BUILTIN_RULES.filter((r) => r.sources.includes(source)).map((r) => ({
    type: "temporary",
    reason: r.reason.replace(/[{}]/g, ""),
    pattern: `(?:${r.pattern}).*`
  }))

const endRule = { type: "temporary", reason: END_REASON, pattern: END_MARKER }

/** NPD's monitor config for a source: its shipped one, or (file) the agent's rules translated; plus the end rule. */
export const npdConfig = (
  kind: SourceKind,
  shipped: (name: string) => NpdMonitorConfig,
  paths: { readonly kernLog: string; readonly journalDir: string; readonly ipamdLog: string }
): NpdMonitorConfig => {
  const withEnd = (c: NpdMonitorConfig): NpdMonitorConfig => ({
    ...c,
    metricsReporting: true,
    rules: [...c.rules, endRule]
  })
  if (kind === "kmsg") {
    const filelog = shipped("kernel-monitor-filelog.json")
    return withEnd({
      ...shipped("kernel-monitor.json"),
      plugin: "filelog",
      pluginConfig: filelog.pluginConfig,
      logPath: paths.kernLog
    })
  }
  if (kind === "journal") return withEnd({ ...shipped("systemd-monitor.json"), logPath: paths.journalDir })
  return withEnd({
    plugin: "filelog",
    pluginConfig: {
      timestamp: '"ts":"([^"]+)"',
      message: '"msg":"((?:[^"\\\\]|\\\\.)*)"',
      timestampFormat: "2006-01-02T15:04:05.999999999Z07:00"
    },
    logPath: paths.ipamdLog,
    lookback: "5m",
    bufferSize: 10,
    source: "ipamd-monitor",
    conditions: [],
    rules: translatedRules(AGENT_SOURCE.file)
  })
}

const agentMatcher = compileRules()
const silentToAgent = (kind: SourceKind, text: string) =>
  agentMatcher.match(AGENT_SOURCE[kind], text).length === 0

const chatterTemplates = (kind: SourceKind): readonly string[] =>
  kind === "kmsg" ? BENIGN_TEMPLATES : kind === "journal" ? SYSTEMD_CHATTER : IPAMD_CHATTER

/** The message texts of one input (the end marker last), as each source's program would write them. */
export const inputTexts = (
  kind: SourceKind,
  input: "chatter" | "storm",
  n: number,
  npd: NpdMonitorConfig
): string[] => {
  const npdRules = npdMatchers(npd)
  const silent = (t: string) => silentToAgent(kind, t) && !npdRules.some((r) => r.test(t))
  // Templates that neither reports (the kernel ones include loop-device I/O errors and memcg OOM kills, which NPD
  // reports, and corrected EDAC errors, which both do); checked on a few fillings each.
  const templates = chatterTemplates(kind).filter((t) => [1, 2, 3].every(() => silent(fill(t))))
  if (templates.length === 0) throw new Error(`no silent chatter for ${kind}`)
  const faults = [
    ...ALL_FAULT_LINES.filter((f) => f.source === AGENT_SOURCE[kind]).map((f) => f.text),
    ...(kind === "journal" ? SYSTEMD_NPD_LINES : [])
  ]
  const rate = input === "storm" ? 0.01 : 0
  const out: string[] = []
  for (let i = 0; i < n; i++) out.push(rng() < rate ? pick(faults) : fill(pick(templates)))
  out.push(END_MARKER)
  return out
}

/**
 * One ipamd.log line per text, stamped now: fault fixtures that are zap JSON keep their fields with `ts` replaced
 * (NPD skips lines older than its lookback; the agent reads them either way).
 */
export const ipamdLines = (texts: readonly string[]): string[] =>
  texts.map((t) => {
    if (!t.startsWith("{")) return ipamdLine(t)
    const fields = JSON.parse(t) as Record<string, unknown>
    if ("ts" in fields) fields.ts = new Date().toISOString()
    return JSON.stringify(fields)
  })
