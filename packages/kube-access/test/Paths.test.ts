import { describe, expect, it } from "vitest"
import { NODE_DIAGNOSTICS_PATH, nodeDiagnosticPath } from "../src/NodeDiagnostic.ts"
import { eventsPath } from "../src/Events.ts"
import { namespacedPath, nodePath } from "../src/Paths.ts"

describe("API paths", () => {
  it("core/v1 and group/version collections and objects, names encoded", () => {
    expect(nodePath("ip-10-0-0-1.ec2.internal")).toBe("/api/v1/nodes/ip-10-0-0-1.ec2.internal")
    expect(nodePath("a/b")).toBe("/api/v1/nodes/a%2Fb")
    expect(namespacedPath("v1", "configmaps", "nodemend-system")).toBe(
      "/api/v1/namespaces/nodemend-system/configmaps"
    )
    expect(namespacedPath("coordination.k8s.io/v1", "leases", "ns", "lock")).toBe(
      "/apis/coordination.k8s.io/v1/namespaces/ns/leases/lock"
    )
    expect(eventsPath("default")).toBe("/apis/events.k8s.io/v1/namespaces/default/events")
    expect(nodeDiagnosticPath("n1")).toBe(`${NODE_DIAGNOSTICS_PATH}/n1`)
    expect(NODE_DIAGNOSTICS_PATH).toBe("/apis/nodemend.io/v1alpha1/nodediagnostics")
  })
})
