// Renders docs/reason-codes.md from the catalog. Pure, so a test can compare it with the committed file.
import { CATALOG, CONDITION_TYPE_INFO, FATAL_XIDS, NEURON_READY } from "../src/catalog.ts"
import { KEYS } from "../src/keys.ts"
import { DEFAULT_REPAIR_POLICIES } from "../src/policies.ts"
import type { CatalogEntry } from "../src/types.ts"

/** What 2.0.0 changed and how a customer keeps 1.x's behaviour (the CHANGELOG names the same changes). */
const MIGRATION_2_0_0 = [
  "## Migrating from 1.x to 2.0.0",
  "",
  "In 2.0.0 NVIDIA's XID catalog chooses the default action of the XIDs (docs/nvidia-monitor.md, \"NVIDIA's XID",
  'catalog"): a bucket that resets the GPU or restarts the machine is a Reboot, and a Reboot whose fault returns',
  "within the controller's `escalation.windowSeconds` (3600) is replaced the next time. Changed:",
  "",
  "| Reason | 1.x | 2.0.0 | NVIDIA's bucket |",
  "|---|---|---|---|",
  '| `NvidiaXID74Error` | Replace | Reboot | WORKFLOW_NVLINK_ERR ("a GPU reset or node reboot is needed to clear this error") |',
  "| `NvidiaXID79Error` | Replace | Reboot | RESTART_BM |",
  "| `NvidiaXID119Error` | Replace | Reboot | RESET_GPU |",
  "| `NvidiaXID120Error` | Replace | Reboot | RESET_GPU |",
  "| `NvidiaXID140Error` | Replace | Reboot | RESET_GPU |",
  "| `NvidiaXID63Error` | Reboot (Condition) | `NvidiaXID63Warning`, an Event: no repair | IGNORE; the driver's XID 154 names the reset it needs (`NvidiaGPUResetRequired`, Reboot) |",
  "",
  "Added: `NvidiaNVLinkGPUResetRequired` (Blackwell NVLink XIDs 144-150 whose registers decode to RESET_GPU).",
  "",
  "To keep 1.x's actions, override them per reason in the repair controller's config (the chart's",
  "`controller.config`, or the `nodemend-controller` ConfigMap); an exact reason wins over its template:",
  "",
  "```yaml",
  "reasons:",
  "  NvidiaXID74Error: { action: Replace }",
  "  NvidiaXID79Error: { action: Replace }",
  "  NvidiaXID119Error: { action: Replace }",
  "  NvidiaXID120Error: { action: Replace }",
  "  NvidiaXID140Error: { action: Replace }",
  "  NvidiaXID63Warning: { action: Reboot }   # with the agent override below",
  "```",
  "",
  "XID 63 reaches the controller only as a Condition: to keep it one, promote it in the agent's config (a promoted",
  "Event clears after `quietSeconds` without a new one, default 600, where 1.x's cleared only on a reboot):",
  "",
  "```yaml",
  "monitors:",
  "  nvidia:",
  "    reasons:",
  "      NvidiaXID63Warning: { severity: Condition }",
  "```",
  "",
  'Automation that reads `defaultAction` or `FATAL_XIDS` sees the 2.0.0 values; `isFatalReason("NvidiaXID63Error")`',
  "is still true (the template is a Condition) but the agent no longer emits that reason.",
  ""
]

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ")

export const renderReasonCodesDoc = (version: string): string => {
  const out: string[] = [
    "<!-- Generated from packages/reason-codes/src/catalog.ts by `npm run docs -w @nodemend/reason-codes`. Do not edit. -->",
    "# Reason codes",
    "",
    `Catalog version ${version}: ${CATALOG.length} entries. Severity \`Condition\` sets the condition False (terminal);`,
    "`Event` is informational (a Warning Event on the Node). Recovery `auto`: the condition returns to True when the",
    "fault clears; `reboot`: only a new boot or a new node clears it. The default action is what the repair controller",
    "does once the toleration has passed; every field can be overridden per reason in its config.",
    "",
    "## Versions",
    "",
    "`@nodemend/reason-codes` is versioned by what a change does to automation built on it. Everything on this page",
    "is recorded in `packages/reason-codes/api/catalog.lock.json`: reason codes, condition types and ready reasons,",
    "severities, message templates and their parameters, recovery, default actions, fatal XIDs, default policies and",
    "keys. A major version may break automation: a code removed or renamed, or any recorded field of it changed, an XID",
    "added to or removed from the fatal list, a default policy changed, a key renamed; the CHANGELOG names every such",
    "change. A minor version only adds (a code, a condition type, a key). `npm run check:contract` (part of `npm test`)",
    "compares the catalog with the last released contract, the newest git tag `reason-codes-vX.Y.Z` or else main, and",
    "fails a change without the version bump and CHANGELOG section it needs; without a tag, every version that reached",
    "main counts as released. Pin a range within one major version, e.g. `^2.0.0`: newer minors only add codes, which",
    "your automation should treat as unknown, not as healthy.",
    "",
    ...MIGRATION_2_0_0,
    "## Default repair policies",
    "",
    "| Condition | Status | Toleration |",
    "|---|---|---|",
    ...DEFAULT_REPAIR_POLICIES.map(
      (p) => `| \`${p.conditionType}\` | ${p.status} | ${p.tolerationSeconds / 60} min |`
    ),
    "",
    "DiskPressure, MemoryPressure and PIDPressure never trigger a repair: they are workload-driven.",
    ""
  ]
  for (const info of CONDITION_TYPE_INFO) {
    const entries = (CATALOG as readonly CatalogEntry[]).filter((e) => e.conditionType === info.type)
    out.push(`## ${info.type}`, "")
    out.push(`Ready: reason \`${info.readyReason}\`, message "${info.readyMessage}".`)
    if (info.type === "AcceleratedHardwareReady")
      out.push(
        `On Neuron nodes: reason \`${NEURON_READY.readyReason}\`, message "${NEURON_READY.readyMessage}".`
      )
    out.push(
      "",
      "| Reason | Severity | Trigger | Default action | Recovery | Monitor | Since |",
      "|---|---|---|---|---|---|---|"
    )
    for (const e of entries) {
      const sev = e.alsoEmittedAs
        ? `${e.severity} (${e.alsoEmittedAs.severity} when ${e.alsoEmittedAs.when})`
        : e.severity
      out.push(
        `| \`${e.code}\` | ${cell(sev)} | ${cell(e.trigger)} | ${e.defaultAction} | ${e.recovery} | ${e.monitor} | ${e.since} |`
      )
    }
    out.push("")
  }
  out.push(
    "## Fatal XIDs",
    "",
    "`NvidiaXID{code}Error` is emitted for these XIDs; any other XID gives `NvidiaXID{code}Warning`.",
    ""
  )
  out.push("| XID | Default action |", "|---|---|")
  for (const [xid, action] of Object.entries(FATAL_XIDS)) out.push(`| ${xid} | ${action} |`)
  out.push(
    "",
    "## Keys",
    "",
    "Labels, annotations, taints, tags, Event reporting controllers and Event reasons that users and automation see",
    "(exported by `@nodemend/reason-codes/keys`).",
    "",
    "| Key | Kind | Owner | Meaning |",
    "|---|---|---|---|"
  )
  for (const k of KEYS) {
    const kind = "effect" in k ? `${k.kind} (${k.effect})` : k.kind
    out.push(`| \`${k.key}\` | ${kind} | ${k.owner} | ${cell(k.description)} |`)
  }
  out.push("")
  return out.join("\n")
}
