/**
 * A pool's DCGM diagnostic before a replacement counts as capacity (ADR 0019), on a real cluster, kwok provider: the
 * controller (its own process) asks each replacement's agent through a NodeDiagnostic; the agent's NodeDiagnostic
 * controller serves it on the NVIDIA monitor's DCGM session against the C test double (dcgmDiagnosticAgent.ts, a
 * process per replacement, with the test's admin credentials, as awsLogCapture.test.ts runs its agent).
 *  - the double fails DCGM's software test: the replacement is not capacity, the Event names the check and DCGM's
 *    words, no pod moves, the repair fails at its one attempt, a relapse in the ledger
 *  - the double passes it: ReplacementReady, the pods move, the repair succeeds
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  clients,
  createTestNamespace,
  deleteNamespace,
  deleteRunNodes,
  waitFor
} from "@nodemend/cluster-harness"
import { CustomObjectsApi } from "@kubernetes/client-node"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { installNodeDiagnosticCrd } from "../../../agent/test/diagnostics/cluster/crd.ts"
import { ledgerConfigMapName, parseLedger } from "../../src/domain/RelapseLedger.ts"
import { type ControllerProcess, killControllers, startControllerProcess } from "./controllerProcess.ts"
import {
  GPU_REASON as REASON,
  GPU_REPLACE,
  gpuPoolWithWorkload,
  onEachReplacement,
  setGpuHealth
} from "./gpuPool.ts"
import { nodeEvents, scenario, sleep, testConfig, waitForEvent } from "./helpers.ts"

const { kc, core } = clients()
const custom = kc.makeApiClient(CustomObjectsApi)
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
const DCGM_MESSAGE = "A pending retired page has been detected in GPU 0." // DCGM_FR_PENDING_PAGE_RETIREMENTS
const PKG = fileURLToPath(new URL("../..", import.meta.url))
const NODE = join(PKG, "../../node_modules/.bin/node")
let ns = ""
const running: ControllerProcess[] = []
const agents: ChildProcess[] = []

beforeAll(async () => {
  await installNodeDiagnosticCrd(kc)
  ns = await createTestNamespace(core, "rdiag")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
  for (const a of agents.splice(0)) a.kill("SIGTERM")
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

const gpuCondition = (name: string, status: "True" | "False") => setGpuHealth(core, name, status)

/** Starts a DCGM-serving agent for each replacement of `node` as it appears; the double passes or fails. */
const agentsForReplacements = (node: string, verdict: "pass" | "fail") => {
  const output: string[] = []
  const watch = onEachReplacement(core, node, (name) => {
    const child = spawn(
      NODE,
      [
        "--conditions=source",
        join(PKG, "test/integration/dcgmDiagnosticAgent.ts"),
        kubeconfig,
        name,
        verdict,
        DCGM_MESSAGE
      ],
      { cwd: PKG, stdio: ["ignore", "pipe", "pipe"] }
    )
    child.stdout?.on("data", (d: Buffer) => output.push(d.toString()))
    child.stderr?.on("data", (d: Buffer) => output.push(d.toString()))
    agents.push(child)
    return undefined
  })
  return { ...watch, output }
}

const nodeDiagnostic = async (name: string) =>
  (await custom.getClusterCustomObject({
    group: "nodemend.io",
    version: "v1alpha1",
    plural: "nodediagnostics",
    name
  })) as {
    metadata: { labels?: Record<string, string> }
    spec: { dcgmDiagnostic?: { level: number } }
    status?: { dcgmDiagnostic?: { completed?: { result: string; message: string; tests?: unknown[] } } }
  }

/** A GPU pool of three whose first node gets the GPU fault; its pool asks for DCGM's diagnostic at level 1. */
const setUp = async (prefix: string, maxAttempts: number) => {
  const s = scenario(prefix)
  const { target, pod } = await gpuPoolWithWorkload(core, ns, s)
  running.push(
    await startControllerProcess(
      kubeconfig,
      testConfig(ns, s, {
        ...GPU_REPLACE,
        pools: { [s.pool]: { replacementDiagnostic: { dcgmLevel: 1, timeoutSeconds: 60 } } },
        replacement: { timeoutSeconds: 90, healthTimeoutSeconds: 90, maxAttempts }
      })
    )
  )
  return { s, target, pod: pod.metadata!.name! }
}

describe("replacement health gate: a pool's DCGM diagnostic", () => {
  it("a replacement that fails DCGM's software test is not capacity: the Event names the check and DCGM's words, no pod moves", async () => {
    const { s, target, pod } = await setUp("rdiagf", 1)
    const replacements = agentsForReplacements(target, "fail")
    try {
      await gpuCondition(target, "False")
      const unhealthy = (await waitForEvent(core, target, "ReplacementUnhealthy", 90_000))[0]!
      const first = replacements.seen[0]!
      expect(unhealthy.message).toBe(
        `replacement ${first} is not capacity: DcgmDiagnostic: software test failed on GPU 0: ${DCGM_MESSAGE} ` +
          "(DCGM diagnostic level 1); no more replacements (replacement.maxAttempts 1): the repair fails, the node is kept"
      )
      // The request was the controller's, for this repair, at the pool's level; the answer the agent's, per test.
      const nd = await nodeDiagnostic(first)
      expect(nd.metadata.labels?.["nodemend.io/repair-id"]).toBeDefined()
      expect(nd.spec.dcgmDiagnostic).toEqual({ level: 1 })
      expect(nd.status?.dcgmDiagnostic?.completed?.result).toBe("Fail")
      expect(nd.status?.dcgmDiagnostic?.completed?.tests).toContainEqual({
        test: "software",
        testId: 15,
        entityGroupId: 1,
        entityId: 0,
        result: "Fail",
        errorCode: 6,
        errorMessage: DCGM_MESSAGE
      })
      expect(nd.status?.dcgmDiagnostic?.completed?.tests).toHaveLength(8)
      // Never capacity: no ReplacementReady, no drain, the pod where it was.
      await sleep(3000)
      expect(await nodeEvents(core, target, "ReplacementReady")).toEqual([])
      expect(await nodeEvents(core, target, "Drained")).toEqual([])
      expect((await core.readNamespacedPod({ name: pod, namespace: ns })).spec?.nodeName).toBe(target)
      expect(replacements.seen).toEqual([first])
      // A relapse of the repair, as every failed replacement is.
      const cm = await core.readNamespacedConfigMap({
        namespace: ns,
        name: ledgerConfigMapName(s.pool, REASON)
      })
      const ledger = parseLedger(cm.data?.ledger ?? "")
      expect(ledger._tag).toBe("Success")
      if (ledger._tag === "Success")
        expect(ledger.success.relapses).toContainEqual(
          expect.objectContaining({ node: first, kind: "replacement", repairedNode: target })
        )
    } finally {
      await replacements.stop()
    }
  }, 240_000)

  it("a replacement that passes it is capacity: ReplacementReady, the pods move, the repair succeeds", async () => {
    const { target, pod } = await setUp("rdiagp", 2)
    const replacements = agentsForReplacements(target, "pass")
    try {
      await gpuCondition(target, "False")
      await waitForEvent(core, target, "RepairSucceeded", 150_000)
      const first = replacements.seen[0]!
      expect(replacements.seen).toEqual([first])
      expect((await nodeEvents(core, target, "ReplacementReady")).map((e) => e.message)).toEqual([
        `replacement ${first} is Ready`
      ])
      expect(await nodeEvents(core, target, "ReplacementUnhealthy")).toEqual([])
      const done = (await nodeDiagnostic(first)).status?.dcgmDiagnostic?.completed
      expect(done?.result).toBe("Pass")
      expect(done?.message).toBe("8 test result(s), none failed")
      await waitFor(
        "the pod gone from the repaired node",
        async () =>
          (await core.readNamespacedPod({ name: pod, namespace: ns }).catch(() => undefined))?.spec
            ?.nodeName !== target
            ? true
            : undefined,
        { timeoutMs: 30_000 }
      )
    } finally {
      await replacements.stop()
    }
  }, 240_000)
})
