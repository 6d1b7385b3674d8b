// Example: route a node's nodemend conditions to teams by condition type, paging only for terminal ones
// (severity Condition). Strict TypeScript: the Record over ConditionType fails to compile if a type is missed.
//
//   npm install @nodemend/reason-codes
//   kubectl get node gpu-7 -o json | node route-alerts.ts     (Node.js 23.6+ runs .ts directly; or compile it)
import { readFileSync } from "node:fs"
import { type ConditionType, parseNodeCondition } from "@nodemend/reason-codes"

const team: Record<ConditionType, string> = {
  AcceleratedHardwareReady: "gpu-oncall",
  KernelReady: "os",
  ContainerRuntimeReady: "os",
  NetworkingReady: "network",
  StorageReady: "storage"
}

interface Route {
  readonly reason: string
  readonly to: string
  readonly page: boolean
}

const route = (condition: unknown): Route | undefined => {
  const parsed = parseNodeCondition(condition)
  // A reason this version does not know (a newer agent): send it to the team, never guess it is harmless.
  if (parsed.kind === "unknown-reason")
    return { reason: parsed.reason, to: team[parsed.conditionType], page: false }
  if (parsed.kind !== "fault" || parsed.status !== "False") return undefined
  const { reason, entry } = parsed.resolved
  return { reason, to: team[parsed.conditionType], page: entry.severity === "Condition" }
}

const node = JSON.parse(readFileSync(0, "utf8")) as { status?: { conditions?: unknown[] } }
const routes = (node.status?.conditions ?? []).map(route).filter((r) => r !== undefined)
console.log(JSON.stringify(routes, null, 2))
