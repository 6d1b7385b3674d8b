// Log capture before termination that works against AWS, end to end on the fake cloud: the real controller
// (composed as main.ts composes it, `logCapture.destination: s3://…`), the node's agent collector in process,
// and the fake cloud's S3, which verifies each presigned URL's signature.
//  - a GPU fault -> drain -> the controller presigns a PUT -> the agent uploads the redacted bundle -> the
//    instance is terminated; the LogCapture and RepairSucceeded Events name the object, which is in the fake S3
//    with no planted secret, and `kubectl nodemend logs --repair` fetches it with the operator's credentials
//  - a node whose agent never answers: the capture times out at its bound and the repair goes on
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import type { CoreV1Event } from "@kubernetes/client-node"
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  kubeconfigPath,
  patchNodeCondition,
  uniqueName,
  waitFor
} from "@nodemend/cluster-harness"
import { kubeAccessFromKubeconfig, makeKubeHttp } from "@nodemend/kube-access"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
// The node's agent, in process (test-only cross-package imports, as the diagnostics cluster tests do).
import { NodeDiagnosticController } from "../../../agent/src/diagnostics/NodeDiagnosticController.ts"
import { makeKubeHttp as makeAgentHttp } from "../../../agent/src/k8s/kube-http.ts"
import { installNodeDiagnosticCrd } from "../../../agent/test/diagnostics/cluster/crd.ts"
import { leakyAgentState, makeHostRoot, plantedValues } from "../../../agent/test/diagnostics/fixtures.ts"
import { repairLogsCommand } from "../../../kubectl-nodemend/src/repairLogs.ts"
import { logCaptureLayer } from "../../src/diagnostics/logCaptureLayer.ts"
import { type ClusterFakeCloud, startClusterFakeCloud } from "./awsFakeCloudSupport.ts"
import {
  awsTestConfig,
  CREDENTIALS,
  type ControllerFiber,
  FAKE_SUBNETS,
  fakeEc2,
  runPoolInstance,
  startAwsController,
  stopController,
  useFakeCredentials
} from "./awsController.ts"
import { isReady, readNodeOrUndefined, waitForNodeGone } from "./helpers.ts"

const { kc, core } = clients()
const POOL_LABEL = "karpenter.sh/nodepool"
const POOL = uniqueName("awslogs").slice(0, 40)
const BUCKET = "nodemend-e2e-logs"
const CAPTURE_BOUND_S = 8
const STARTED = Date.now() - 2000
let ns = ""
let cloud: ClusterFakeCloud
let controller: ControllerFiber | undefined
let hostRoot = ""
const agents: Scope.Closeable[] = []
const nodes: string[] = []

const eventAt = (e: CoreV1Event) =>
  new Date(
    String(e.eventTime ?? e.lastTimestamp ?? e.firstTimestamp ?? e.metadata?.creationTimestamp)
  ).getTime()
const events = async (node: string, reason: string) =>
  (
    await core.listNamespacedEvent({
      namespace: "default",
      fieldSelector: `involvedObject.name=${node},reason=${reason}`
    })
  ).items.filter((e) => eventAt(e) >= STARTED)
const waitForEvent = (node: string, reason: string, timeoutMs = 90_000) =>
  waitFor(`event ${reason} on ${node}`, async () => (await events(node, reason))[0], {
    timeoutMs,
    intervalMs: 250
  })
const gpuFault = (name: string) =>
  patchNodeCondition(core, name, {
    type: "AcceleratedHardwareReady",
    status: "False",
    reason: "NvidiaXID79Error",
    message: "GPU has fallen off the bus",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

/** The node's agent: its NodeDiagnostic controller, allowing only the fake S3's bucket folder. */
const startAgent = async (nodeName: string, workDir: string) => {
  const scope = await Effect.runPromise(Scope.make())
  agents.push(scope)
  await Effect.runPromise(
    NodeDiagnosticController({
      http: makeAgentHttp(kubeAccessFromKubeconfig(kubeconfigPath())),
      nodeName,
      hostRoot,
      workDir,
      agentState: leakyAgentState,
      destinationAllowlist: [`${cloud.url}/${BUCKET}/nodemend/`]
    }).pipe(Scope.provide(scope))
  )
}

beforeAll(async () => {
  useFakeCredentials()
  await installNodeDiagnosticCrd(kc)
  ns = await createTestNamespace(core, "awslogs")
  cloud = await startClusterFakeCloud(core, {
    s3Credentials: { [CREDENTIALS.accessKeyId]: CREDENTIALS.secretAccessKey }
  })
  hostRoot = await makeHostRoot()
  const ec2 = fakeEc2(cloud.url)
  for (let i = 0; i < 4; i++)
    nodes.push(
      await runPoolInstance(ec2, {
        subnet: FAKE_SUBNETS[i % 3]!,
        pool: [POOL_LABEL, POOL],
        instanceType: "p5.48xlarge"
      })
    )
  ec2.destroy()
  await waitFor(
    "the pool's kwok Nodes Ready",
    async () =>
      (await Promise.all(nodes.map(async (n) => isReady(await readNodeOrUndefined(core, n))))).every(Boolean),
    { timeoutMs: 100_000 }
  )
  const config = awsTestConfig(
    ns,
    cloud.url,
    {
      poolLabel: POOL_LABEL,
      nodeSelector: `${POOL_LABEL}=${POOL}`,
      maxUnhealthyPercent: 100,
      maxInFlight: "100%",
      policies: [
        {
          conditionType: "AcceleratedHardwareReady",
          status: "False",
          tolerationSeconds: 3,
          action: "Replace",
          captureLogs: true
        }
      ],
      logCapture: {
        destination: `s3://${BUCKET}/nodemend`,
        timeoutSeconds: CAPTURE_BOUND_S,
        categories: ["Base"]
      }
    },
    { s3: cloud.url }
  )
  controller = await startAwsController(config, "aws-logs-e2e", logCaptureLayer(config))
}, 150_000)

afterAll(async () => {
  await stopController(controller)
  for (const s of agents) await Effect.runPromise(Scope.close(s, Exit.void))
  if (cloud) await cloud.stop()
  if (ns) await deleteNamespace(core, ns)
  if (hostRoot) await rm(hostRoot, { recursive: true, force: true })
})

describe("log capture before termination, against the fake cloud's S3", () => {
  it("captures the redacted bundle into S3 before terminating, names it, and the plugin fetches it", async () => {
    const target = nodes[0]!
    const workDir = await mkdtemp(join(tmpdir(), "awslogs-"))
    await startAgent(target, workDir)
    await gpuFault(target)
    const capture = await waitForEvent(target, "LogCapture")
    const m = /captured to s3:\/\/([^/]+)\/(\S+) \(bundle sha256 ([0-9a-f]{64}), (\d+) bytes\)/.exec(
      capture.message ?? ""
    )
    expect(m, capture.message).not.toBeNull()
    const [, bucket, key, sha256, size] = m!
    expect(bucket).toBe(BUCKET)
    expect(key).toMatch(new RegExp(`^nodemend/${target}/\\d{8}T\\d{6}Z-.+-logs\\.tar\\.gz$`))
    // In the fake S3, as the agent reported it, and with no planted secret in it.
    const stored = cloud.objects.get(BUCKET, key!)!
    expect(stored).toBeDefined()
    expect(createHash("sha256").update(stored.body).digest("hex")).toBe(sha256)
    expect(stored.body.length).toBe(Number(size))
    const tar = gunzipSync(stored.body).toString("latin1")
    expect(tar).toContain(`${target}/agent/state.json`)
    expect(tar).toContain("[REDACTED]")
    for (const secret of plantedValues()) expect(tar).not.toContain(secret)
    // Then the instance was terminated, and the repair's last word names the object.
    await waitForNodeGone(core, target)
    const succeeded = await waitForEvent(target, "RepairSucceeded")
    expect(succeeded.message).toContain(`; logs: s3://${BUCKET}/${key}`)
    expect(eventAt(await waitForEvent(target, "TerminatingInstance"))).toBeGreaterThanOrEqual(
      eventAt(capture)
    )

    // kubectl nodemend logs --repair: from the controller's Events, with the operator's credentials.
    const out = await mkdtemp(join(tmpdir(), "awslogs-out-"))
    const line = await repairLogsCommand(
      makeKubeHttp(kubeAccessFromKubeconfig(kubeconfigPath()), { userAgent: "kubectl-nodemend" }),
      {
        node: target,
        outputDir: out,
        timeoutMs: 20_000,
        controllerNamespace: ns,
        region: "us-west-2",
        endpoint: cloud.url
      }
    )
    expect(line).toContain(`s3://${BUCKET}/${key}`)
    expect((await readFile(join(out, `${target}-logs.tar.gz`))).equals(stored.body)).toBe(true)
    const list = join(out, "b.tar.gz")
    await writeFile(list, stored.body)
    expect(execFileSync("tar", ["-tzf", list], { encoding: "utf8" })).toContain(`${target}/manifest.json`)
    await rm(out, { recursive: true, force: true })
    await rm(workDir, { recursive: true, force: true })
  }, 150_000)

  it("a capture no agent answers ends at its bound and the repair goes on, naming no object", async () => {
    const target = nodes[1]!
    await gpuFault(target)
    const drained = await waitForEvent(target, "Drained")
    const capture = await waitForEvent(target, "LogCapture")
    expect(capture.message).toBe("pre-termination log capture: timed-out")
    const heldMs = eventAt(capture) - eventAt(drained)
    expect(heldMs).toBeGreaterThanOrEqual(CAPTURE_BOUND_S * 1000 - 1000)
    expect(heldMs).toBeLessThanOrEqual(CAPTURE_BOUND_S * 1000 + 3000)
    await waitForNodeGone(core, target)
    const succeeded = await waitForEvent(target, "RepairSucceeded")
    expect(succeeded.message).not.toContain("logs:")
    expect(cloud.objects.list().filter((o) => o.includes(`/${target}/`))).toEqual([])
  }, 150_000)
})
