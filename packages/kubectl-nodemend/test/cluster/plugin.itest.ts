// kubectl nodemend end to end: real API server, the agent's NodeDiagnostic collector running in-process for
// each test node, a loopback server standing in for S3 (PUT + GET twin). kwok nodes have no kubelet, so the
// `node` destination's proxy download is covered by the unit test of its path.
import { execFile } from "node:child_process"
import { readdir } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import {
  CustomObjectsApi,
  EventsV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime
} from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type CollectorFixture,
  startCollectorFixture
} from "../../../agent/test/diagnostics/cluster/collectorFixture.ts"
import { testKubeconfigPath, uniqueName } from "../../../agent/test/diagnostics/cluster/kube.ts"
import { plantedValues } from "../../../agent/test/diagnostics/fixtures.ts"
import { type RepairRecord, serializeRecord } from "@nodemend/repair-controller"
import { run } from "../../src/cli.ts"
import { NodeDiagnosticGVR as GVR } from "@nodemend/kube-access/NodeDiagnostic"

let kubeconfig: string
let env: CollectorFixture
// This file's stand-in for the repair controller's namespace, where its journal lives.
const controllerNamespace = uniqueName("plugin-controller")

beforeAll(async () => {
  kubeconfig = testKubeconfigPath()
  env = await startCollectorFixture("plugin")
  await env.core.createNamespace({ body: { metadata: { name: controllerNamespace } } })
})
afterAll(async () => {
  await env?.core.deleteNamespace({ name: controllerNamespace }).catch(() => undefined)
  await env?.close()
})

/** A journal ConfigMap as the repair controller writes it (its record format, its name and label). */
const writeJournal = async (nodeName: string, uid: string, fields: Partial<RepairRecord>) => {
  const record: RepairRecord = {
    v: 3,
    id: uniqueName("repair"),
    phase: "Draining",
    action: "Replace",
    conditionType: "AcceleratedHardwareReady",
    conditionStatus: "False",
    reason: "NvidiaXID79Error",
    startedAt: new Date().toISOString(),
    order: "removeFirst",
    drainMode: "wait",
    drainDeadlineMs: 600_000,
    captureLogs: false,
    node: {
      name: nodeName,
      uid,
      providerID: `kwok://${nodeName}`,
      labels: {},
      instance: { instanceId: `i-${nodeName}`, state: "running", launch: {}, owner: { kind: "standalone" } }
    },
    ...fields
  }
  await env.core.createNamespacedConfigMap({
    namespace: controllerNamespace,
    body: {
      metadata: { name: `nodemend-repair-${nodeName}`, labels: { "nodemend.io/repair-journal": "true" } },
      data: { record: serializeRecord(record) }
    }
  })
}

const cli = async (...argv: string[]) => {
  const out: string[] = []
  const err: string[] = []
  const code = await run(
    [...argv, "--kubeconfig", kubeconfig, "--controller-namespace", controllerNamespace],
    {
      out: (t) => out.push(t),
      err: (t) => err.push(t)
    }
  )
  return { code, out: out.join("\n"), err: err.join("\n") }
}

const tarList = async (file: string) =>
  (await promisify(execFile)("tar", ["-tzf", file])).stdout.trim().split("\n")

const diagnosticGone = async (name: string) =>
  env.kc
    .makeApiClient(CustomObjectsApi)
    .getClusterCustomObject({ ...GVR, name })
    .then(
      () => false,
      (e: { code?: number }) => e.code === 404
    )

describe("kubectl nodemend logs", () => {
  it("collects from nodes chosen by selector, downloads through the URL's GET twin, and cleans up", async () => {
    const pool = uniqueName("pool")
    const a = await env.createNode({ "karpenter.sh/nodepool": pool })
    const b = await env.createNode({ "karpenter.sh/nodepool": pool })
    await env.startCollector(a)
    await env.startCollector(b)
    const out = join(env.workDir, "bundles")
    const url = `${env.server.base}/bucket/{node}.tar.gz?X-Amz-Signature=abc`
    const r = await cli(
      "logs",
      "-l",
      `karpenter.sh/nodepool=${pool}`,
      "-o",
      out,
      "--timeout",
      "30s",
      "--destination-url",
      url,
      "--download-url",
      url,
      "--categories",
      "Base,Networking"
    )
    expect(r.code, r.err).toBe(0)
    expect(r.err).toContain(`${a}: requested`)
    expect(r.err).toMatch(/(Success|SuccessWithErrors) \(/)
    // Each bundle was checked against the digest its node's agent reported.
    expect(`${r.out}\n${r.err}`).toMatch(/verified sha256 [0-9a-f]{64}/)
    expect((await readdir(out)).sort()).toEqual([`${a}-logs.tar.gz`, `${b}-logs.tar.gz`].sort())
    const names = await tarList(join(out, `${a}-logs.tar.gz`))
    expect(names).toContain(`${a}/system/meminfo.txt`)
    expect(names).toContain(`${a}/networking/ip-addr.txt`)
    const { gunzipSync } = await import("node:zlib")
    const { readFile } = await import("node:fs/promises")
    const raw = gunzipSync(await readFile(join(out, `${b}-logs.tar.gz`))).toString("utf8")
    for (const s of plantedValues()) expect(raw).not.toContain(s)
    expect(await diagnosticGone(a)).toBe(true)
    expect(await diagnosticGone(b)).toBe(true)
  })

  it("says clearly when a node does not exist", async () => {
    const r = await cli("logs", "no-such-node-xyz", "-o", env.workDir)
    expect(r.code).toBe(1)
    expect(r.err).toContain("node not found: no-such-node-xyz")
  })

  it("times out clearly when no agent answers, and still cleans up", async () => {
    const n = await env.createNode()
    const r = await cli("logs", n, "-o", env.workDir, "--timeout", "2s")
    expect(r.code).toBe(1)
    expect(r.out).toContain(
      `FAIL ${n}: ${n}: timed out after 2s; the nodemend agent on ${n} never picked it up`
    )
    expect(await diagnosticGone(n)).toBe(true)
  })

  it("reports the agent's refusal of a destination outside its allowlist", async () => {
    const n = await env.createNode()
    await env.startCollector(n)
    const port = new URL(env.server.base).port
    const r = await cli(
      "logs",
      n,
      "-o",
      env.workDir,
      "--timeout",
      "30s",
      "--destination-url",
      `http://localhost:${port}/x/{node}`
    )
    expect(r.code).toBe(1)
    expect(r.out).toContain("not in the agent's allowlist")
  })

  it("node destination: the agent keeps the bundle on the node; the proxy download error is reported clearly", async () => {
    // kwok nodes have no kubelet, so the API server cannot proxy to them; a real node serves /logs/nodemend/.
    const n = await env.createNode()
    await env.startCollector(n)
    const r = await cli("logs", n, "-o", env.workDir, "--timeout", "30s", "--categories", "Base")
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/(Success|SuccessWithErrors) \(/)
    expect(r.out).toContain(`/api/v1/nodes/${n}/proxy/logs/nodemend/${n}-logs.tar.gz answered`)
    const { existsSync } = await import("node:fs")
    expect(existsSync(join(env.hostRoot, "var/log/nodemend", `${n}-logs.tar.gz`))).toBe(true)
    expect(await diagnosticGone(n)).toBe(true)
  })

  it("downloads through the API server with the kubeconfig's credentials (same client as the proxy path)", async () => {
    const { downloadThroughApiServer } = await import("../../src/download.ts")
    const { connect } = await import("../../src/kubeClient.ts")
    const { readFile } = await import("node:fs/promises")
    const { createHash } = await import("node:crypto")
    const kube = connect(kubeconfig)
    // What the answer must be (as a node's agent reports its bundle): the same GET read once beforehand.
    const chunks: Buffer[] = []
    for await (const c of await kube.stream("/version", 10_000)) chunks.push(c as Buffer)
    const body = Buffer.concat(chunks)
    const digest = { sha256: createHash("sha256").update(body).digest("hex"), size: body.length }
    const file = join(env.workDir, "version.json")
    await downloadThroughApiServer(kube, "/version", file, 10_000, { node: "api-server", digest })
    expect(JSON.parse(await readFile(file, "utf8")).gitVersion).toMatch(/^v1\./)
  })

  it("runs as the installed bin (kubectl-nodemend)", async () => {
    const bin = fileURLToPath(new URL("../../src/main.ts", import.meta.url))
    const r = await promisify(execFile)(bin, ["logs", "no-such-node-xyz"], {
      env: { ...process.env, KUBECONFIG: kubeconfig }
    }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e
    )
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("node not found")
  })
})

describe("kubectl nodemend status and timeline", () => {
  it("shows our conditions, the repair phase, the breaker per pool, and a node's history in order", async () => {
    const pool = uniqueName("pool")
    const n = await env.createNode({
      "karpenter.sh/nodepool": pool,
      "topology.kubernetes.io/zone": "us-west-2a"
    })
    await env.core.patchNodeStatus(
      {
        name: n,
        body: {
          status: {
            conditions: [
              {
                type: "AcceleratedHardwareReady",
                status: "False",
                reason: "NvidiaXID79Error",
                message: "GPU fell off the bus",
                lastHeartbeatTime: new Date(),
                lastTransitionTime: new Date(Date.now() - 60_000)
              }
            ]
          }
        }
      },
      setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch)
    )
    // The controller's journal entry for the repair; a second node carries only the old Node annotation,
    // which a node can write itself and which is no repair record.
    const node = await env.core.readNode({ name: n })
    await writeJournal(n, node.metadata?.uid ?? "", {
      phase: "Draining",
      startedAt: new Date(Date.now() - 30_000).toISOString()
    })
    const claimed = await env.createNode({ "karpenter.sh/nodepool": pool })
    await env.core.patchNode(
      {
        name: claimed,
        body: {
          metadata: {
            annotations: {
              "nodemend.io/repair": JSON.stringify({ v: 1, phase: "Draining", action: "Replace" })
            }
          }
        }
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
    )
    await env.kc.makeApiClient(EventsV1Api).createNamespacedEvent({
      namespace: "default",
      body: {
        metadata: { generateName: `${n}-`, namespace: "default" },
        eventTime: new V1MicroTime(),
        regarding: { apiVersion: "v1", kind: "Node", name: n, uid: node.metadata?.uid },
        type: "Warning",
        reason: "RepairBlocked",
        action: "Decide",
        note: `more than 20% of nodes are unhealthy in nodepool ${pool}`,
        reportingController: "nodemend.io/repair-controller",
        reportingInstance: "test"
      }
    })
    const status = await cli("status", "-l", `karpenter.sh/nodepool=${pool}`)
    expect(status.code, status.err).toBe(0)
    const row = status.out.split("\n").find((l) => l.startsWith(n)) ?? ""
    expect(row).toContain("us-west-2a")
    expect(row).toContain("False:NvidiaXID79Error")
    expect(row).toContain("Draining/Replace")
    expect(status.out.split("\n").find((l) => l.startsWith(claimed))).toMatch(/ -$/)
    const poolRow = status.out.split("\n").find((l) => l.startsWith(pool)) ?? ""
    expect(poolRow).toMatch(new RegExp(`^${pool} +2 +1 +1 +OPEN: more than 20%`))

    const tl = await cli("timeline", n)
    expect(tl.code, tl.err).toBe(0)
    const lines = tl.out.split("\n")
    const iCond = lines.findIndex((l) => l.includes("AcceleratedHardwareReady=False NvidiaXID79Error"))
    const iRepair = lines.findIndex((l) => l.includes("repair Replace started"))
    const iEvent = lines.findIndex((l) => l.includes("RepairBlocked"))
    expect(iCond).toBeGreaterThan(0)
    expect(iRepair).toBeGreaterThan(iCond)
    expect(iEvent).toBeGreaterThan(iRepair)
  })

  // Written by whoever the agent or a tenant can be: the controller's reasons from another identity, and
  // messages carrying terminal escape sequences (title change, clear screen) and a bidi override.
  const OSC_TITLE = "\u001b]0;owned\u0007"
  const CSI_CLEAR = "\u001b[2J\u001b[H"
  const CONTROL = /[\p{Cc}\p{Bidi_Control}]/u
  const written: { namespace: string; name: string }[] = []
  afterAll(async () => {
    for (const e of written) await env.core.deleteNamespacedEvent(e).catch(() => undefined)
  })
  const writeEvent = async (
    n: string,
    reason: string,
    note: string,
    reportingController: string
  ): Promise<void> => {
    const node = await env.core.readNode({ name: n })
    const e = await env.kc.makeApiClient(EventsV1Api).createNamespacedEvent({
      namespace: "default",
      body: {
        metadata: { generateName: `${n}-`, namespace: "default" },
        eventTime: new V1MicroTime(),
        regarding: { apiVersion: "v1", kind: "Node", name: n, uid: node.metadata?.uid },
        type: "Warning",
        reason,
        action: "Decide",
        note,
        reportingController,
        reportingInstance: "test"
      }
    })
    written.push({ namespace: "default", name: e.metadata?.name ?? "" })
  }

  it("prints a condition message and an event note without their escape sequences", async () => {
    const pool = uniqueName("pool")
    const n = await env.createNode({ "karpenter.sh/nodepool": pool })
    await env.core.patchNodeStatus(
      {
        name: n,
        body: {
          status: {
            conditions: [
              {
                type: "KernelReady",
                status: "False",
                reason: "KernelBug",
                message: `${OSC_TITLE}kernel oops${CSI_CLEAR}\nfake-node   True\u202e`,
                lastHeartbeatTime: new Date(),
                lastTransitionTime: new Date(Date.now() - 60_000)
              }
            ]
          }
        }
      },
      setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch)
    )
    await writeEvent(
      n,
      "RepairBlocked",
      `${OSC_TITLE}breaker${CSI_CLEAR} open`,
      "nodemend.io/repair-controller"
    )
    // What the API server stores and returns still holds the sequences: the plugin is what strips them.
    const stored = await env.core.readNode({ name: n })
    expect(stored.status?.conditions?.[0]?.message).toContain(CSI_CLEAR)

    for (const argv of [
      ["timeline", n],
      ["status", "-l", `karpenter.sh/nodepool=${pool}`]
    ]) {
      const r = await cli(...argv)
      expect(r.code, r.err).toBe(0)
      for (const line of r.out.split("\n")) expect(line).not.toMatch(CONTROL)
      expect(r.out).toContain("breaker open")
    }
    const tl = await cli("timeline", n)
    const lines = tl.out.split("\n")
    // The message's newline did not start a row of its own.
    expect(lines.filter((l) => l.includes("fake-node"))).toEqual([
      expect.stringMatching(/KernelReady=False KernelBug: kernel oops fake-node {3}True$/)
    ])
  })

  it("ignores the controller's reasons written by another reportingController", async () => {
    const pool = uniqueName("pool")
    const n = await env.createNode({ "karpenter.sh/nodepool": pool })
    await writeEvent(n, "RepairBlocked", "forged breaker", "nodemend.io/agent")
    await writeEvent(n, "RepairStandDown", "forged stand-down", "nodemend.io/agent")
    // core/v1 with only the legacy source set to the controller's name.
    const legacy = await env.core.createNamespacedEvent({
      namespace: "default",
      body: {
        metadata: { generateName: `${n}-`, namespace: "default" },
        involvedObject: { apiVersion: "v1", kind: "Node", name: n },
        type: "Warning",
        reason: "RepairBlocked",
        message: "forged through source",
        source: { component: "nodemend.io/repair-controller" },
        lastTimestamp: new Date(),
        firstTimestamp: new Date(),
        count: 1
      }
    })
    written.push({ namespace: "default", name: legacy.metadata?.name ?? "" })

    const status = await cli("status", "-l", `karpenter.sh/nodepool=${pool}`)
    expect(status.code, status.err).toBe(0)
    const poolRow = status.out.split("\n").find((l) => l.startsWith(pool)) ?? ""
    expect(poolRow).toMatch(/ closed +no$/)
    expect(status.out).not.toContain("forged")

    const tl = await cli("timeline", n)
    expect(tl.out).toMatch(/unverified: nodemend\.io\/agent\/test +Warning RepairBlocked: forged breaker/)
    expect(tl.out).toMatch(
      /unverified: nodemend\.io\/repair-controller \(legacy source\.component only\) +Warning RepairBlocked: forged through source/
    )
  })

  // Issue 24: a node posted `nodemend.io/repair-controller` followed by a zero-width space, and the timeline showed
  // it as the controller's. The admission policy compares exact strings, so such a name gets through it.
  it("marks a source that imitates the controller with invisible characters as unverified, and prints it plainly", async () => {
    const pool = uniqueName("pool")
    const n = await env.createNode({ "karpenter.sh/nodepool": pool })
    const ZWSP = "\u200b"
    // core/v1 Events without an eventTime: the API server checks neither field's form.
    for (const [field, note] of [
      ["source", "forged through source with a zero-width space"],
      ["reportingComponent", "forged through reportingComponent with a zero-width space"]
    ] as const) {
      const e = await env.core.createNamespacedEvent({
        namespace: "default",
        body: {
          metadata: { generateName: `${n}-`, namespace: "default" },
          involvedObject: { apiVersion: "v1", kind: "Node", name: n },
          type: "Warning",
          reason: "RepairBlocked",
          message: note,
          ...(field === "source"
            ? { source: { component: `nodemend.io/repair-controller${ZWSP}`, host: n } }
            : { reportingComponent: `nodemend.io/repair-controller${ZWSP}`, reportingInstance: n }),
          lastTimestamp: new Date(),
          firstTimestamp: new Date(),
          count: 1
        }
      })
      written.push({ namespace: "default", name: e.metadata?.name ?? "" })
      // Stored as written: the zero-width space is there for the plugin to see.
      expect(e.source?.component ?? e.reportingComponent).toBe(`nodemend.io/repair-controller${ZWSP}`)
    }
    await writeEvent(n, "RepairStarted", "the controller's own", "nodemend.io/repair-controller")

    const tl = await cli("timeline", n)
    expect(tl.code, tl.err).toBe(0)
    expect(tl.out).not.toMatch(/[\p{Cf}\p{Default_Ignorable_Code_Point}]/u)
    for (const note of [
      "forged through source with a zero-width space",
      "forged through reportingComponent with a zero-width space"
    ])
      expect(tl.out.split("\n").find((l) => l.includes(note))).toMatch(
        new RegExp(
          `Event +unverified: nodemend\\.io/repair-controller/${n} \\(hidden or look-alike characters in its name\\) +Warning RepairBlocked: ${note}$`
        )
      )
    expect(tl.out.split("\n").find((l) => l.includes("the controller's own"))).toMatch(
      /Event +verified: nodemend\.io\/repair-controller\/test +Warning RepairStarted: the controller's own$/
    )
    expect(tl.out).toContain("unverified: whatever the writer says it is")
    // Nor do they open the breaker.
    const status = await cli("status", "-l", `karpenter.sh/nodepool=${pool}`)
    expect(status.out.split("\n").find((l) => l.startsWith(pool))).toMatch(/ closed +no$/)
  })
})
