// captureLogsBeforeTermination against the real API server: with the node's agent collector running
// in-process the bundle arrives; with no agent the call returns at the bound; it never throws.
import { createHash } from "node:crypto"
import { CustomObjectsApi } from "@kubernetes/client-node"
import { kubeAccessFromKubeconfig } from "@nodemend/kube-access"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
// The agent's collector runs in-process for the node under test (test-only cross-package import).
import {
  type CollectorFixture,
  startCollectorFixture
} from "../../../../agent/test/diagnostics/cluster/collectorFixture.ts"
import { testKubeconfigPath, uniqueName } from "../../../../agent/test/diagnostics/cluster/kube.ts"
import { captureLogsBeforeTermination, NodeDiagnosticGVR } from "../../../src/diagnostics/LogCapture.ts"
import { logCaptureHookLayer } from "../../../src/diagnostics/logCaptureHookLayer.ts"
import { kubeLayer } from "../../../src/kube/Kube.ts"
import { makeControllerHttp } from "../../../src/kube/KubeHttp.ts"
import { LogCaptureHook } from "../../../src/repair/LogCaptureHook.ts"

let env: CollectorFixture
const http = () => makeControllerHttp(kubeAccessFromKubeconfig(testKubeconfigPath()))

beforeAll(async () => {
  env = await startCollectorFixture("capture")
})
afterAll(async () => {
  await env?.close()
})

describe("captureLogsBeforeTermination", () => {
  it("gets the bundle from the node's agent and reports captured", async () => {
    const node = await env.createNode()
    await env.startCollector(node)
    const result = await Effect.runPromise(
      captureLogsBeforeTermination(http(), node, {
        timeout: "30 seconds",
        destination: `${env.server.base}/bucket/${node}.tar.gz`,
        categories: ["Base", "Networking"],
        pollInterval: "200 millis"
      })
    )
    expect(result.outcome).toBe("captured")
    const stored = env.server.objects.get(`/bucket/${node}.tar.gz`)
    expect(stored?.length ?? 0).toBeGreaterThan(0)
    // The digest the node's agent reported is the digest of what arrived (what the LogCapture Event records).
    expect(result).toMatchObject({
      bundle: { sha256: createHash("sha256").update(stored!).digest("hex"), size: stored!.length }
    })
    // Owned by the Node, so it goes away with it.
    const nd = (await env.kc
      .makeApiClient(CustomObjectsApi)
      .getClusterCustomObject({ ...NodeDiagnosticGVR, name: node })) as {
      metadata: { ownerReferences: Array<{ kind: string; name: string }> }
    }
    expect(nd.metadata.ownerReferences[0]).toMatchObject({ kind: "Node", name: node })

    // A second capture for the same node replaces the finished object instead of reading its stale status.
    const again = await Effect.runPromise(
      captureLogsBeforeTermination(http(), node, {
        timeout: "30 seconds",
        destination: `${env.server.base}/bucket/${node}-again.tar.gz`,
        categories: ["Base"],
        pollInterval: "200 millis"
      })
    )
    expect(again.outcome).toBe("captured")
    expect(env.server.objects.has(`/bucket/${node}-again.tar.gz`)).toBe(true)
  })

  it("returns timed-out at the bound when no agent answers", async () => {
    const node = await env.createNode()
    const result = await Effect.runPromise(
      captureLogsBeforeTermination(http(), node, {
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
      captureLogsBeforeTermination(http(), uniqueName("no-such-node"), {
        timeout: "5 seconds",
        destination: "node"
      })
    )
    expect(missing).toMatchObject({ outcome: "failed" })
    expect(missing.message).toContain("not found")

    const broken = makeControllerHttp({
      ...kubeAccessFromKubeconfig(testKubeconfigPath()),
      server: "https://127.0.0.1:1"
    })
    const down = await Effect.runPromise(
      captureLogsBeforeTermination(broken, "any", { timeout: "3 seconds", destination: "node" })
    )
    expect(down.outcome).toBe("failed")
  })
})

describe("logCaptureHookLayer", () => {
  it("gives the repair state machine its outcome through the LogCaptureHook service", async () => {
    const withAgent = await env.createNode()
    await env.startCollector(withAgent)
    const without = await env.createNode()
    const layer = logCaptureHookLayer({
      destination: `${env.server.base}/bucket/{repairId}/{node}.tar.gz`,
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
    const stored = env.server.objects.get(`/bucket/r-1/${withAgent}.tar.gz`)
    expect(stored).toBeDefined()
    expect(captured).toEqual({
      outcome: "captured",
      bundle: { sha256: createHash("sha256").update(stored!).digest("hex"), size: stored!.length }
    })
    expect(timedOut).toEqual({ outcome: "timed-out" })
  })
})
