// The admission policies' literals are the code's: the five condition types the agent may write, the
// reportingController the agent writes its Events as, and the one only the repair controller may write.
// (What the policies do is tested against the real API server: test/cluster/agentAdmission.test.ts.)
import { describe, expect, it } from "vitest"
import {
  AGENT_REPORTING_CONTROLLER,
  REPAIR_CONTROLLER_REPORTING_CONTROLLER
} from "../../reason-codes/src/keys.ts"
import { CONDITION_TYPES } from "../../reason-codes/src/types.ts"
import { find, type KubeObject, loadManifests } from "../src/index.ts"

interface Policy {
  readonly spec: {
    readonly variables?: ReadonlyArray<{ readonly name: string; readonly expression: string }>
    readonly validations: ReadonlyArray<{ readonly expression: string }>
  }
}

const policy = (objects: ReadonlyArray<KubeObject>, name: string): Policy =>
  find(objects, "ValidatingAdmissionPolicy", name) as unknown as Policy

/** The single-quoted CEL string literals of an expression. */
const literals = (expression: string): string[] =>
  [...expression.matchAll(/'([^']*)'/gu)].map((m) => m[1] ?? "")

describe("admission policy literals", () => {
  const agent = loadManifests("agent")
  const controller = loadManifests("controller")

  it("nodemend-agent-nodes: the agent's condition types are @nodemend/reason-codes' CONDITION_TYPES", () => {
    const types = policy(agent, "nodemend-agent-nodes").spec.variables?.find(
      (v) => v.name === "nodemendTypes"
    )
    expect(literals(types?.expression ?? "")).toEqual([...CONDITION_TYPES])
  })

  it("nodemend-agent-events: the agent's Events carry the agent's reportingController", () => {
    const rules = policy(agent, "nodemend-agent-events").spec.validations.map((v) => v.expression)
    const controllers = rules.flatMap((r) =>
      [...r.matchAll(/reportingController\.orValue\(''\) == '([^']*)'/gu)].map((m) => m[1])
    )
    expect(controllers.length).toBeGreaterThan(0)
    for (const c of controllers) expect(c).toBe(AGENT_REPORTING_CONTROLLER)
  })

  it("nodemend-controller-events: protects the repair controller's reportingController", () => {
    const rule = policy(controller, "nodemend-controller-events").spec.validations[0]?.expression ?? ""
    const names = [...rule.matchAll(/orValue\(''\) != '([^']*)'/gu)].map((m) => m[1])
    expect(names.length).toBe(4)
    for (const n of names) expect(n).toBe(REPAIR_CONTROLLER_REPORTING_CONTROLLER)
  })
})
