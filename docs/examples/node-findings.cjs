// Example: a CommonJS script (require) that turns a node's conditions into findings: the catalog code, its
// parameters, severity, whether it is fatal and what nodemend's default policy does about it.
//
//   npm install @nodemend/reason-codes
//   kubectl get node gpu-7 -o json | node node-findings.cjs
const { defaultActionFor, isFatalReason, parseNodeCondition, parseReason } = require("@nodemend/reason-codes")
const { REPAIR_TAINT_KEY } = require("@nodemend/reason-codes/keys")

const findings = (node) => {
  const out = []
  for (const condition of node.status?.conditions ?? []) {
    const parsed = parseNodeCondition(condition)
    if (parsed.kind !== "fault") continue
    const { reason, entry } = parsed.resolved
    out.push({
      conditionType: parsed.conditionType,
      status: parsed.status,
      ...parseReason(reason),
      severity: entry.severity,
      fatal: isFatalReason(reason),
      action: defaultActionFor(reason)
    })
  }
  // Whether the repair controller is already at work on the node.
  const underRepair = (node.spec?.taints ?? []).some((t) => t.key === REPAIR_TAINT_KEY)
  return { findings: out, underRepair }
}

let input = ""
process.stdin.on("data", (d) => (input += d))
process.stdin.on("end", () => console.log(JSON.stringify(findings(JSON.parse(input)), null, 2)))
