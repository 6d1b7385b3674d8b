// Renders docs/reason-codes.md from the catalog. Pure, so a test can compare it with the committed file.
import { CATALOG, CONDITION_TYPE_INFO, FATAL_XIDS, NEURON_READY } from "../src/catalog.ts"
import { KEYS } from "../src/keys.ts"
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
    "main counts as released. Pin a range within one major version, e.g. `^1.2.0`: newer minors only add codes, which",
    "your automation should treat as unknown, not as healthy.",
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
