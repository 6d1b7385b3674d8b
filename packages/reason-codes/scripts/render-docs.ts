// Renders docs/reason-codes.md from the catalog. Pure, so a test can compare it with the committed file.
import { CATALOG, CONDITION_TYPE_INFO, FATAL_XIDS, NEURON_READY } from "../src/catalog.ts"
import { DEFAULT_REPAIR_POLICIES } from "../src/policies.ts"
import type { CatalogEntry } from "../src/types.ts"

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
  out.push("")
  return out.join("\n")
}
