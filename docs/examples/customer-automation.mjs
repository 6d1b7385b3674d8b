// Example: customer automation that imports @nodemend/reason-codes (zero runtime dependencies) and decides
// what to do about a node's conditions, e.g. in an alert router or a capacity dashboard.
//
//   npm install @nodemend/reason-codes
//   kubectl get node gpu-7 -o json | node customer-automation.mjs
import { parseNodeCondition } from "@nodemend/reason-codes"

const decide = (node) => {
  const decisions = []
  for (const condition of node.status?.conditions ?? []) {
    const parsed = parseNodeCondition(condition)
    switch (parsed.kind) {
      case "fault": {
        const { entry, defaultAction, parameters } = parsed.resolved
        if (parsed.status !== "False") break
        // Page the GPU on-call for hardware faults that only a reboot or replacement clears.
        const page = entry.conditionType === "AcceleratedHardwareReady" && entry.recovery === "reboot"
        decisions.push({ reason: parsed.resolved.reason, action: defaultAction, page, parameters })
        break
      }
      case "unknown-reason":
        // A newer agent may emit codes this version does not know: surface them, never guess.
        decisions.push({ reason: parsed.reason, action: "Investigate", page: false, detail: parsed.detail })
        break
      default:
        break // ready, kubelet's own conditions, or malformed input
    }
  }
  return decisions
}

let input = ""
process.stdin.on("data", (d) => (input += d))
process.stdin.on("end", () => console.log(JSON.stringify(decide(JSON.parse(input)), null, 2)))
