/**
 * The agent binary answers a NodeDiagnostic for its node (the collector as main.ts wires it): the bundle is
 * uploaded to an allowlisted loopback URL standing in for S3, the status says Success/SuccessWithErrors, and
 * the bundle carries the agent's state. Detection keeps running alongside.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CustomObjectsApi } from "@kubernetes/client-node"
import { clients, waitFor } from "@nodemend/cluster-harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NodeDiagnosticGVR } from "@nodemend/kube-access/NodeDiagnostic"
import { installNodeDiagnosticCrd } from "../diagnostics/cluster/crd.ts"
import { startUploadServer, type UploadServer } from "../diagnostics/cluster/uploadServer.ts"
import { type AgentNode, createAgentNode } from "./agent-node.ts"
import { failWithAgentOutput } from "./agent-process.ts"

describe("nodemend-agent serves NodeDiagnostic log captures", () => {
  const { kc, core } = clients()
  const custom = kc.makeApiClient(CustomObjectsApi)
  let server: UploadServer
  let node: AgentNode | undefined
  let nodeName = ""

  beforeAll(async () => {
    await installNodeDiagnosticCrd(kc)
    server = await startUploadServer()
    node = await createAgentNode(core, "1c2d3e4f-0000-4000-8000-0000000d1a90")
    nodeName = node.name
    node.start(`diagnostics:\n  destinationAllowlist: ["${server.base}/bucket/"]\n`)
    await node.waitForCondition("KernelReady", "True", { timeoutMs: 60_000 })
  }, 300_000)
  afterAll(async () => {
    await node?.stop()
    await custom.deleteClusterCustomObject({ ...NodeDiagnosticGVR, name: nodeName }).catch(() => undefined)
    await server?.close()
    await node?.close()
  })

  it("uploads a bundle with the agent state and reports completion", async () => {
    const path = `/bucket/${nodeName}.tar.gz`
    await custom.createClusterCustomObject({
      ...NodeDiagnosticGVR,
      body: {
        apiVersion: "nodemend.io/v1alpha1",
        kind: "NodeDiagnostic",
        metadata: { name: nodeName },
        spec: {
          logCapture: { destination: `${server.base}${path}?X-Amz-Signature=abc`, categories: ["Base"] }
        }
      }
    })
    const completed = await waitFor(
      "capture completed",
      async () => {
        const o = (await custom.getClusterCustomObject({ ...NodeDiagnosticGVR, name: nodeName })) as {
          status?: { captureStatuses?: Array<{ type: string; state: { completed?: { reason: string } } }> }
        }
        return o.status?.captureStatuses?.find((s) => s.type === "Log")?.state.completed
      },
      { timeoutMs: 60_000, intervalMs: 250 }
    ).catch(failWithAgentOutput(node?.agent))
    expect(["Success", "SuccessWithErrors"]).toContain(completed.reason)
    const bundle = server.objects.get(path)
    expect(bundle, "bundle uploaded").toBeDefined()
    const dir = mkdtempSync(join(tmpdir(), "nodemend-bundle-"))
    try {
      writeFileSync(join(dir, "b.tar.gz"), bundle!)
      const names = execFileSync("tar", ["-tzf", join(dir, "b.tar.gz")], { encoding: "utf8" }).split("\n")
      const state = names.find((n) => n.endsWith("agent/state.json"))
      expect(state, names.join("\n")).toBeDefined()
      const text = execFileSync("tar", ["-xzOf", join(dir, "b.tar.gz"), state!], { encoding: "utf8" })
      expect(JSON.parse(text).conditions.map((c: { type: string }) => c.type)).toContain("KernelReady")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
