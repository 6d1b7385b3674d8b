// The agent's collector against the real API server: create a NodeDiagnostic, the in-process controller for
// that node collects from a temp host root and delivers; assertions on the status and on what arrived.
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync } from "node:fs"
import { readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { uniqueName } from "./kube.ts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Collector, defaultCollectors } from "../../../src/diagnostics/Collectors.ts"
import { nodeBundleName, NODE_BUNDLE_DIR } from "../../../src/diagnostics/Delivery.ts"
import { ERRORS_FILE } from "../../../src/diagnostics/LogBundle.ts"
import { type CompletedState, NodeDiagnosticGVR } from "@nodemend/kube-access/NodeDiagnostic"
import { leakyAgentState, plantedValues } from "../fixtures.ts"
import { type CollectorFixture, startCollectorFixture } from "./collectorFixture.ts"

let env: CollectorFixture
let custom: CustomObjectsApi

beforeAll(async () => {
  env = await startCollectorFixture("ctl")
  custom = env.kc.makeApiClient(CustomObjectsApi)
})
afterAll(async () => {
  await env?.close()
})

const startAgent = (nodeName: string, collectors?: (root: string) => ReadonlyArray<Collector>) =>
  env.startCollector(nodeName, { agentState: leakyAgentState, ...(collectors ? { collectors } : {}) })

const createDiagnostic = (name: string, destination: string, categories?: string[]) =>
  custom.createClusterCustomObject({
    ...NodeDiagnosticGVR,
    body: {
      apiVersion: "nodemend.io/v1alpha1",
      kind: "NodeDiagnostic",
      metadata: { name },
      spec: { logCapture: { destination, ...(categories ? { categories } : {}) } }
    }
  })

const waitCompleted = (name: string, generation = 1): Promise<CompletedState> =>
  waitFor(
    `NodeDiagnostic ${name} completed (generation ${generation})`,
    async () => {
      const o = (await custom.getClusterCustomObject({ ...NodeDiagnosticGVR, name })) as {
        status?: { captureStatuses?: Array<{ type: string; state: { completed?: CompletedState } }> }
      }
      const c = o.status?.captureStatuses?.find((s) => s.type === "Log")?.state.completed
      return c && (c.observedGeneration ?? 0) >= generation ? c : undefined
    },
    { timeoutMs: 30_000 }
  )

const tarList = async (bytes: Buffer) => {
  const f = join(env.workDir, `${uniqueName("b")}.tar.gz`)
  await writeFile(f, bytes)
  return execFileSync("tar", ["-tzf", f], { encoding: "utf8" }).trim().split("\n")
}

describe("NodeDiagnosticController", () => {
  it("uploads a redacted bundle to an allowed URL and reports it in the status", async () => {
    const node = uniqueName("diag-node")
    await startAgent(node)
    await createDiagnostic(node, `${env.server.base}/bucket/${node}.tar.gz?X-Amz-Signature=abc`)
    const done = await waitCompleted(node)
    expect(["Success", "SuccessWithErrors"]).toContain(done.reason)
    expect(done.message).toContain(`uploaded`)
    expect(done.message).not.toContain("X-Amz-Signature")
    const body = env.server.objects.get(`/bucket/${node}.tar.gz`)
    expect(body).toBeDefined()
    // The status carries the SHA-256 and size of exactly what arrived (taken while the bundle was written).
    expect(done.bundle).toEqual({
      sha256: createHash("sha256").update(body!).digest("hex"),
      size: body!.length
    })
    const names = await tarList(body!)
    for (const f of [
      "system/meminfo.txt",
      "networking/ip-addr.txt",
      "cni/10-aws.conflist",
      "agent/state.json",
      "manifest.json"
    ]) {
      expect(names).toContain(`${node}/${f}`)
    }
    const raw = gunzipSync(body!).toString("utf8")
    for (const secret of plantedValues()) expect(raw).not.toContain(secret)
    await custom.deleteClusterCustomObject({ ...NodeDiagnosticGVR, name: node })
  })

  it("refuses a URL outside the allowlist with a Failure and makes no request", async () => {
    const node = uniqueName("diag-node")
    await startAgent(node)
    const before = env.server.requests.length
    // localhost is loopback but not in this agent's allowlist (only 127.0.0.1 is).
    const port = new URL(env.server.base).port
    await createDiagnostic(node, `http://localhost:${port}/bucket/${node}.tar.gz`)
    const done = await waitCompleted(node)
    expect(done.reason).toBe("Failure")
    expect(done.message).toMatch(/not in the agent's allowlist/)
    expect(env.server.requests.length).toBe(before)
    await custom.deleteClusterCustomObject({ ...NodeDiagnosticGVR, name: node })
  })

  it.each([
    [
      "another port of the allowed host",
      (base: string) => {
        const other = new URL(base)
        other.port = String(other.port === "65535" ? 65534 : Number(other.port) + 1)
        return `${other.origin}/bucket/x.tar.gz`
      }
    ],
    ["a path outside the allowed folder", (base: string) => `${base}/other/x.tar.gz`],
    [
      "a bucket outside the allowlist",
      () => "https://attacker-bucket.s3.amazonaws.com/loot.tar.gz?X-Amz-Signature=a"
    ],
    ["the metadata service", () => "http://169.254.169.254/latest/meta-data/iam/security-credentials/"]
  ])("refuses %s with a Failure, collecting and sending nothing", async (_what, destination) => {
    const node = uniqueName("diag-node")
    await startAgent(node)
    const before = env.server.requests.length
    await createDiagnostic(node, destination(env.server.base))
    const done = await waitCompleted(node)
    expect(done.reason).toBe("Failure")
    expect(done.message).toMatch(/^refused: .*; nothing was collected or sent$/)
    expect(env.server.requests.length).toBe(before)
    await custom.deleteClusterCustomObject({ ...NodeDiagnosticGVR, name: node })
  })

  it("ships the bundle with the error recorded when a collector hangs", async () => {
    const node = uniqueName("diag-node")
    const hung: Collector = {
      name: "hung-dmesg",
      category: "System",
      output: "kernel/dmesg.txt",
      source: { _tag: "Command", argv: ["sleep", "120"] },
      timeoutMs: 500
    }
    await startAgent(node, (root) => [
      hung,
      ...defaultCollectors({ hostRoot: root }).filter((c) => c.category === "Base")
    ])
    await createDiagnostic(node, `${env.server.base}/bucket/${node}.tar.gz`, ["Base", "System"])
    const done = await waitCompleted(node)
    expect(done.reason).toBe("SuccessWithErrors")
    expect(done.message).toContain("hung-dmesg")
    const names = await tarList(env.server.objects.get(`/bucket/${node}.tar.gz`)!)
    expect(names).toContain(`${node}/${ERRORS_FILE}`)
    expect(names).toContain(`${node}/system/meminfo.txt`)
    await custom.deleteClusterCustomObject({ ...NodeDiagnosticGVR, name: node })
  })

  it("keeps a node-destination bundle on the host and re-captures on a new generation", async () => {
    const node = uniqueName("diag-node")
    await startAgent(node)
    await createDiagnostic(node, "node", ["Base"])
    const first = await waitCompleted(node)
    expect(first.message).toContain(`/api/v1/nodes/${node}/proxy/logs/nodemend/${node}-logs.tar.gz`)
    const onHost = join(env.hostRoot, NODE_BUNDLE_DIR, nodeBundleName(node))
    expect(existsSync(onHost)).toBe(true)
    const kept = await readFile(onHost)
    expect(await tarList(kept)).toContain(`${node}/system/meminfo.txt`)
    expect(first.bundle).toEqual({
      sha256: createHash("sha256").update(kept).digest("hex"),
      size: kept.length
    })

    env.server.denied.add(`/bucket/${node}-2.tar.gz`)
    await custom.patchClusterCustomObject(
      {
        ...NodeDiagnosticGVR,
        name: node,
        body: { spec: { logCapture: { destination: `${env.server.base}/bucket/${node}-2.tar.gz` } } }
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
    const second = await waitCompleted(node, 2)
    expect(second.reason).toBe("Failure")
    // Nothing was delivered, so no digest (the first capture's does not linger).
    expect(second.bundle).toBeUndefined()
    // The status code, never what the destination answered (an allowed host's page is not ours to publish).
    expect(second.message).toBe(
      `upload failed: PUT ${env.server.base}/bucket/${node}-2.tar.gz answered 403 (Forbidden)`
    )
    await custom.deleteClusterCustomObject({ ...NodeDiagnosticGVR, name: node })
  })

  it("is validated by the API server: a destination that is neither node nor a URL is rejected", async () => {
    await expect(createDiagnostic(uniqueName("diag-node"), "ftp://x")).rejects.toMatchObject({ code: 422 })
  })
})
