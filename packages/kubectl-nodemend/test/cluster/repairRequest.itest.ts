// kubectl nodemend repair (#41 item 4) against the real API server, with the shipped CRD, admission policy and
// requester role: the plugin names the caller as the API server knows it (SelfSubjectReview), so the policy lets
// the request in; it prints the controller's answers as they change (--wait until Done or Refused, exit 1 when
// refused); a reason no catalog knows is refused before anything is written; a caller without the role is refused.
// The status is written here as the controller writes it (its decisions: the controller's repairRequest cluster test).
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions
} from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testKubeConfig, uniqueName } from "../../../agent/test/diagnostics/cluster/kube.ts"
import {
  installRepairRequestCrd,
  installShippedPolicy,
  RR,
  removeShippedPolicy,
  requester
} from "../../../repair-controller/test/integration/repairRequestSupport.ts"
import { run } from "../../src/cli.ts"

const kc = testKubeConfig()
const core = kc.makeApiClient(CoreV1Api)
const custom = kc.makeApiClient(CustomObjectsApi)
const ns = uniqueName("rreq-plugin")
let workDir = ""
let createdPolicy = false
let trainer: { kubeconfig: string; username: string }
let stranger: { kubeconfig: string }

const kubeconfigFile = async (name: string, c: KubeConfig) => {
  const path = join(workDir, `${name}.kubeconfig`)
  await writeFile(path, c.exportConfig())
  return path
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), "nodemend-rreq-"))
  await core.createNamespace({ body: { metadata: { name: ns } } })
  await installRepairRequestCrd(kc, ns)
  createdPolicy = await installShippedPolicy(kc)
  const t = await requester(kc, core, ns, "trainer")
  trainer = { kubeconfig: await kubeconfigFile("trainer", t.kc), username: t.username }
  // A service account with no role: the API server refuses its request (RBAC).
  await core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name: "stranger" } } })
  const token = await core.createNamespacedServiceAccountToken({
    name: "stranger",
    namespace: ns,
    body: { spec: { audiences: [], expirationSeconds: 3600 } }
  })
  const s = new KubeConfig()
  s.loadFromOptions({
    clusters: t.kc.clusters,
    users: [{ name: "stranger", token: token.status?.token ?? "" }],
    contexts: [{ name: "stranger", cluster: t.kc.clusters[0]?.name ?? "", user: "stranger" }],
    currentContext: "stranger"
  })
  stranger = { kubeconfig: await kubeconfigFile("stranger", s) }
})
afterAll(async () => {
  await core.deleteNamespace({ name: ns }).catch(() => undefined)
  if (createdPolicy) await removeShippedPolicy(kc)
  await rm(workDir, { recursive: true, force: true })
})

const plugin = async (kubeconfig: string, args: string[]) => {
  const out: string[] = []
  const err: string[] = []
  const code = await run(["repair", ...args, "--kubeconfig", kubeconfig, "--controller-namespace", ns], {
    out: (t) => out.push(t),
    err: (t) => err.push(t)
  })
  return { code, out: out.join("\n"), err: err.join("\n") }
}

/** The request the plugin created for `node` (its name comes from generateName). */
const requestFor = async (node: string) => {
  const list = (await custom.listNamespacedCustomObject({ ...RR, namespace: ns })) as {
    items: Array<{ metadata: { name: string }; spec: Record<string, unknown> }>
  }
  return list.items.find((i) => i.spec.nodeName === node)
}

const setStatus = (name: string, status: Record<string, string>) =>
  custom.patchNamespacedCustomObjectStatus(
    { ...RR, namespace: ns, name, body: { status } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
  )

describe("kubectl nodemend repair", () => {
  it("creates the request as the caller the API server knows, and follows it with --wait until Done", async () => {
    const running = plugin(trainer.kubeconfig, [
      "gpu-7",
      "--reason",
      "ManualRepairRequested",
      "--message",
      "rank 3 straggles",
      "--wait",
      "--timeout",
      "30s"
    ])
    let request: Awaited<ReturnType<typeof requestFor>>
    for (let i = 0; i < 50 && request === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100))
      request = await requestFor("gpu-7")
    }
    expect(request?.spec).toEqual({
      nodeName: "gpu-7",
      reason: "ManualRepairRequested",
      message: "rank 3 straggles",
      requestedBy: { username: trainer.username }
    })
    const name = request?.metadata.name ?? ""
    await setStatus(name, {
      phase: "Held",
      reason: "Blocked",
      message: "the breaker is open; lifts when at most 1 are"
    })
    await new Promise((r) => setTimeout(r, 1500))
    await setStatus(name, {
      phase: "Done",
      reason: "Succeeded",
      outcome: "Succeeded",
      repairId: "r-1",
      message: "repair r-1 succeeded"
    })
    const r = await running
    expect(r.code).toBe(0)
    expect(r.out).toContain(
      `repairrequest ${ns}/${name} created: repair gpu-7 for ManualRepairRequested, requested by ${trainer.username}`
    )
    expect(r.out).toContain("Held (Blocked): the breaker is open; lifts when at most 1 are")
    expect(r.out).toContain("Done (Succeeded) [repair r-1]: repair r-1 succeeded")
  })

  it("exits 1 when the controller refuses the request", async () => {
    const running = plugin(trainer.kubeconfig, [
      "gpu-8",
      "--reason",
      "NvidiaNodeRebootRequired",
      "--wait",
      "--timeout",
      "30s"
    ])
    let request: Awaited<ReturnType<typeof requestFor>>
    for (let i = 0; i < 50 && request === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100))
      request = await requestFor("gpu-8")
    }
    await setStatus(request?.metadata.name ?? "", {
      phase: "Refused",
      reason: "NoNode",
      message: "there is no Node gpu-8"
    })
    const r = await running
    expect([r.code, r.out.includes("Refused (NoNode): there is no Node gpu-8")]).toEqual([1, true])
  })

  it("refuses a reason no catalog knows before writing anything; a caller without the role gets the API server's 403", async () => {
    const unknown = await plugin(trainer.kubeconfig, ["gpu-9", "--reason", "Straggler"])
    expect(unknown.code).toBe(1)
    expect(unknown.err).toContain("--reason Straggler is no reason code")
    expect(await requestFor("gpu-9")).toBeUndefined()
    const denied = await plugin(stranger.kubeconfig, ["gpu-9", "--reason", "ManualRepairRequested"])
    expect(denied.code).toBe(1)
    expect(denied.err).toContain("forbidden")
    expect(await requestFor("gpu-9")).toBeUndefined()
  })
})
