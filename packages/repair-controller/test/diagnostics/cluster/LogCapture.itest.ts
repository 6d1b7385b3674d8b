// captureLogsBeforeTermination against the real API server: with the node's agent collector running
// in-process the bundle arrives; with no agent the call returns at the bound; it never throws.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node"
import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
// The agent's collector runs in-process for the node under test (test-only cross-package import).
import { NodeDiagnosticController } from "../../../../agent/src/diagnostics/NodeDiagnosticController.ts"
import { kubeAccessFromKubeconfig } from "@nodemend/kube-access"
import { makeKubeHttp } from "../../../../agent/src/k8s/kube-http.ts"
import { makeHostRoot } from "../../../../agent/test/diagnostics/fixtures.ts"
import { installNodeDiagnosticCrd } from "../../../../agent/test/diagnostics/cluster/crd.ts"
import {
  testKubeConfig,
  testKubeconfigPath,
  uniqueName
} from "../../../../agent/test/diagnostics/cluster/kube.ts"
import {
  startUploadServer,
  type UploadServer
} from "../../../../agent/test/diagnostics/cluster/uploadServer.ts"
import { captureLogsBeforeTermination, NodeDiagnosticGVR } from "../../../src/diagnostics/LogCapture.ts"
import { logCaptureHookLayer } from "../../../src/diagnostics/logCaptureHookLayer.ts"
import { kubeLayer } from "../../../src/kube/Kube.ts"
import { LogCaptureHook } from "../../../src/repair/LogCaptureHook.ts"

let kc: KubeConfig
let core: CoreV1Api
let server: UploadServer
let hostRoot: string
let workDir: string
const scopes: Scope.Closeable[] = []
const nodes: string[] = []

beforeAll(async () => {
  kc = testKubeConfig()
  core = kc.makeApiClient(CoreV1Api)
  await installNodeDiagnosticCrd(kc)
  server = await startUploadServer()
  hostRoot = await makeHostRoot()
  workDir = await mkdtemp(join(tmpdir(), "nodemend-capture-"))
})
afterAll(async () => {
  for (const s of scopes) await Effect.runPromise(Scope.close(s, Exit.void))
  for (const name of nodes) await core.deleteNode({ name }).catch(() => undefined)
  await server?.close()
  await rm(hostRoot, { recursive: true, force: true })
  await rm(workDir, { recursive: true, force: true })
})

const createNode = async () => {
  const name = uniqueName("capture-node")
  await core.createNode({ body: { metadata: { name, labels: { "nodemend.io/test": "diagnostics" } } } })
  nodes.push(name)
  return name
}

describe("captureLogsBeforeTermination", () => {
  it("gets the bundle from the node's agent and reports captured", async () => {
    const node = await createNode()
    const scope = await Effect.runPromise(Scope.make())
    scopes.push(scope)
    await Effect.runPromise(
      NodeDiagnosticController({
        http: makeKubeHttp(kubeAccessFromKubeconfig(testKubeconfigPath())),
        nodeName: node,
        hostRoot,
        workDir,
        destinationAllowlist: ["127.0.0.1"]
      }).pipe(Scope.provide(scope))
    )
    const result = await Effect.runPromise(
      captureLogsBeforeTermination({ kc }, node, {
        timeout: "30 seconds",
        destination: `${server.base}/bucket/${node}.tar.gz`,
        categories: ["Base", "Networking"],
        pollInterval: "200 millis"
      })
    )
    expect(result.outcome).toBe("captured")
    expect(server.objects.get(`/bucket/${node}.tar.gz`)?.length ?? 0).toBeGreaterThan(0)
    // Owned by the Node, so it goes away with it.
    const nd = (await kc
      .makeApiClient(CustomObjectsApi)
      .getClusterCustomObject({ ...NodeDiagnosticGVR, name: node })) as {
      metadata: { ownerReferences: Array<{ kind: string; name: string }> }
    }
    expect(nd.metadata.ownerReferences[0]).toMatchObject({ kind: "Node", name: node })

    // A second capture for the same node replaces the finished object instead of reading its stale status.
    const again = await Effect.runPromise(
      captureLogsBeforeTermination({ kc }, node, {
        timeout: "30 seconds",
        destination: `${server.base}/bucket/${node}-again.tar.gz`,
        categories: ["Base"],
        pollInterval: "200 millis"
      })
    )
    expect(again.outcome).toBe("captured")
    expect(server.objects.has(`/bucket/${node}-again.tar.gz`)).toBe(true)
  })

  it("returns timed-out at the bound when no agent answers", async () => {
    const node = await createNode()
    const result = await Effect.runPromise(
      captureLogsBeforeTermination({ kc }, node, {
        timeout: "2 seconds",
        destination: "node",
        pollInterval: "200 millis"
      })
    )
    expect(result.outcome).toBe("timed-out")
    expect(result.elapsedMs).toBeGreaterThanOrEqual(2_000)
    expect(result.elapsedMs).toBeLessThan(4_000)
  })

  it("returns failed (not an error) for an unknown node or an unreachable API server", async () => {
    const missing = await Effect.runPromise(
      captureLogsBeforeTermination({ kc }, uniqueName("no-such-node"), {
        timeout: "5 seconds",
        destination: "node"
      })
    )
    expect(missing).toMatchObject({ outcome: "failed" })
    expect(missing.message).toContain("not found")

    const broken = testKubeConfig()
    broken.clusters = broken.clusters.map((c) => ({ ...c, server: "https://127.0.0.1:1" }))
    const down = await Effect.runPromise(
      captureLogsBeforeTermination({ kc: broken }, "any", { timeout: "3 seconds", destination: "node" })
    )
    expect(down.outcome).toBe("failed")
  })
})

describe("logCaptureHookLayer", () => {
  it("gives the repair state machine its outcome through the LogCaptureHook service", async () => {
    const withAgent = await createNode()
    const scope = await Effect.runPromise(Scope.make())
    scopes.push(scope)
    await Effect.runPromise(
      NodeDiagnosticController({
        http: makeKubeHttp(kubeAccessFromKubeconfig(testKubeconfigPath())),
        nodeName: withAgent,
        hostRoot,
        workDir,
        destinationAllowlist: ["127.0.0.1"]
      }).pipe(Scope.provide(scope))
    )
    const without = await createNode()
    const layer = logCaptureHookLayer({
      destination: `${server.base}/bucket/{repairId}/{node}.tar.gz`,
      categories: ["Base"]
    }).pipe(Layer.provide(kubeLayer(testKubeconfigPath(), "test")))
    const req = (nodeName: string, timeoutMs: number) => ({
      nodeName,
      repairId: "r-1",
      conditionType: "AcceleratedHardwareReady",
      reason: "NvidiaXID79Error",
      timeoutMs
    })
    const [captured, timedOut] = await Effect.runPromise(
      Effect.gen(function* () {
        const hook = yield* LogCaptureHook
        return [
          yield* hook.capture(req(withAgent, 30_000)),
          yield* hook.capture(req(without, 1_500))
        ] as const
      }).pipe(Effect.provide(layer))
    )
    expect(captured).toBe("captured")
    expect(server.objects.has(`/bucket/r-1/${withAgent}.tar.gz`)).toBe(true)
    expect(timedOut).toBe("timed-out")
  })
})
