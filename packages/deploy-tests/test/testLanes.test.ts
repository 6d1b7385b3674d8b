// tools/test-lanes.mjs: the cluster phase's lanes must run every package's cluster tests (a package added later,
// or a part split out of a package's test:cluster, is not silently left out).
import { describe, expect, it } from "vitest"
import {
  CLUSTER_LANES,
  uncovered,
  type WorkspacePackage,
  workspacePackages
} from "../../../tools/test-lanes.mjs"

describe("test lanes", () => {
  it("cover every workspace package's test:cluster, whole or in the parts it names", () => {
    expect(uncovered(workspacePackages())).toEqual([])
  })

  it("name what they leave out", () => {
    const packages: WorkspacePackage[] = [
      { name: "a", scripts: { "test:cluster": "vitest run" } },
      { name: "b", scripts: { "test:cluster": "npm run test:cluster:x && npm run test:cluster:y" } },
      { name: "c", scripts: { test: "vitest run" } }
    ]
    expect(uncovered(packages, [[["b", "test:cluster:x"]]])).toEqual(["a test:cluster", "b test:cluster:y"])
    expect(uncovered(packages, [[["a", "test:cluster"]], [["b", "test:cluster"]]])).toEqual([])
  })

  it("keep Karpenter's two users in one lane (one of them freezes Karpenter)", () => {
    const lane = (script: string) => CLUSTER_LANES.findIndex((l) => l.some(([, s]) => s === script))
    expect(lane("test:cluster:karpenter")).toBe(lane("test:cluster:integration"))
  })
})
