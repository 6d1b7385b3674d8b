// kubectl nodemend retry / abandon / status against the real API server: journal records as the repair controller
// writes them, Nodes with its taint, RBAC through a service account's token, the journal's optimistic concurrency
// through the API server's delete preconditions, and the Events the commands record.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  AuthenticationV1Api,
  CoreV1Api,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions
} from "@kubernetes/client-node"
import { type RepairRecord, serializeRecord } from "@nodemend/repair-controller"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  testKubeConfig,
  testKubeconfigPath,
  uniqueName
} from "../../../agent/test/diagnostics/cluster/kube.ts"
import { run } from "../../src/cli.ts"
import { connect } from "../../src/kubeClient.ts"
import { PluginError } from "../../src/errors.ts"
import { runRepairAction } from "../../src/repairActions.ts"
import { serviceAccountKubeconfig } from "./serviceAccountKubeconfig.ts"

const kc = testKubeConfig()
const core = kc.makeApiClient(CoreV1Api)
const rbac = kc.makeApiClient(RbacAuthorizationV1Api)
// This file's stand-in for the repair controller's namespace, where its journal lives.
const ns = uniqueName("actions-controller")
const nodes: string[] = []
let kubeconfig: string
let adminUser: string
let workDir: string

beforeAll(async () => {
  kubeconfig = testKubeconfigPath()
  workDir = await mkdtemp(join(tmpdir(), "nodemend-actions-"))
  await core.createNamespace({ body: { metadata: { name: ns } } })
  const me = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
    body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }
  })
  adminUser = me.status?.userInfo?.username ?? ""
  expect(adminUser).not.toBe("")
})
afterAll(async () => {
  for (const name of nodes) await core.deleteNode({ name }).catch(() => undefined)
  await core.deleteNamespace({ name: ns }).catch(() => undefined)
  await rm(workDir, { recursive: true, force: true })
})

/** A Node in `pool` carrying the taint the controller puts on a node it repairs. */
const createTaintedNode = async (pool: string) => {
  const name = uniqueName("actions-node")
  const n = await core.createNode({
    body: {
      metadata: { name, labels: { "karpenter.sh/nodepool": pool, "nodemend.io/test": "actions" } },
      spec: { taints: [{ key: "nodemend.io/repair", effect: "NoSchedule" }] }
    }
  })
  nodes.push(name)
  return { name, uid: n.metadata?.uid ?? "" }
}

/** A journal ConfigMap as the repair controller writes it (its name, label and record format). */
const writeJournal = async (
  node: { name: string; uid: string },
  pool: string,
  fields: Partial<RepairRecord>
) => {
  const record: RepairRecord = {
    v: 3,
    id: uniqueName("repair"),
    phase: "Failed",
    action: "Replace",
    conditionType: "AcceleratedHardwareReady",
    conditionStatus: "False",
    reason: "NvidiaXID79Error",
    startedAt: new Date(Date.now() - 60_000).toISOString(),
    finishedAt: new Date(Date.now() - 30_000).toISOString(),
    failure: "replacement did not become Ready in time",
    order: "removeFirst",
    drainMode: "wait",
    drainDeadlineMs: 600_000,
    captureLogs: false,
    node: {
      name: node.name,
      uid: node.uid,
      providerID: `kwok://${node.name}`,
      pool,
      labels: {},
      instance: { instanceId: `i-${node.name}`, state: "running", launch: {}, owner: { kind: "standalone" } }
    },
    ...fields
  }
  await core.createNamespacedConfigMap({
    namespace: ns,
    body: {
      metadata: { name: `nodemend-repair-${node.name}`, labels: { "nodemend.io/repair-journal": "true" } },
      data: { record: serializeRecord(record) }
    }
  })
  return record
}

const journalExists = (nodeName: string) =>
  core.readNamespacedConfigMap({ namespace: ns, name: `nodemend-repair-${nodeName}` }).then(
    () => true,
    (e: { code?: number }) => {
      if (e.code === 404) return false
      throw e
    }
  )

const cli = async (config: string, ...argv: string[]) => {
  const out: string[] = []
  const err: string[] = []
  const code = await run([...argv, "--kubeconfig", config, "--controller-namespace", ns], {
    out: (t) => out.push(t),
    err: (t) => err.push(t)
  })
  return { code, out: out.join("\n"), err: err.join("\n") }
}

/** The node's Events with `reason`, read through core/v1 (reportingController is reportingComponent there). */
const eventsAbout = async (nodeName: string, reason: string) =>
  (
    await core.listNamespacedEvent({
      namespace: "default",
      fieldSelector: `involvedObject.kind=Node,involvedObject.name=${nodeName},reason=${reason}`
    })
  ).items

const hasTaint = async (nodeName: string) =>
  ((await core.readNode({ name: nodeName })).spec?.taints ?? []).some(
    (t) => t.key === "nodemend.io/repair" && t.effect === "NoSchedule"
  )

describe("kubectl nodemend status: pools held by a failed repair", () => {
  it("names the pool, the failed node, since when, and the commands to run", async () => {
    const pool = uniqueName("pool")
    const failed = await createTaintedNode(pool)
    const inFlight = await createTaintedNode(pool)
    const record = await writeJournal(failed, pool, {})
    await writeJournal(inFlight, pool, {
      phase: "Draining",
      finishedAt: undefined as never,
      failure: undefined as never
    })
    const r = await cli(kubeconfig, "status", "-l", `karpenter.sh/nodepool=${pool}`)
    expect(r.code, r.err).toBe(0)
    const lines = r.out.split("\n")
    const head = lines.findIndex((l) => l.startsWith("Held by a failed repair"))
    expect(head).toBeGreaterThan(0)
    expect(lines[head + 1]).toMatch(/^POOL +FAILED NODE +SINCE +REPAIR +FAILURE$/)
    expect(lines[head + 2]).toBe(
      `${pool}   ${failed.name}   ${record.finishedAt}   ${record.id}   replacement did not become Ready in time`
    )
    // The repair in flight holds nothing that an operator should act on.
    expect(lines.slice(head).join("\n")).not.toContain(inFlight.name)
    expect(r.out).toContain(`kubectl nodemend retry ${failed.name} --controller-namespace ${ns}`)
    expect(r.out).toContain(`kubectl nodemend abandon ${failed.name} --controller-namespace ${ns}`)
  })
})

describe("kubectl nodemend retry", () => {
  it("deletes the Failed record, keeps the taint, and records who asked as an Event", async () => {
    const pool = uniqueName("pool")
    const node = await createTaintedNode(pool)
    const record = await writeJournal(node, pool, {})
    const r = await cli(kubeconfig, "retry", node.name)
    expect(r.code, r.err).toBe(0)
    expect(r.out).toContain(
      `deleted the journal record of failed repair ${record.id} (ConfigMap ${ns}/nodemend-repair-${node.name}`
    )
    expect(r.out).toContain(`kept the taint nodemend.io/repair:NoSchedule on Node ${node.name}`)
    expect(r.out).toContain(`recorded Event RepairRetryRequested on Node ${node.name}`)
    expect(await journalExists(node.name)).toBe(false)
    expect(await hasTaint(node.name)).toBe(true)
    expect(
      (await core.readNode({ name: node.name })).metadata?.annotations?.["nodemend.io/do-not-repair"]
    ).toBeUndefined()
    const [e, ...more] = await eventsAbout(node.name, "RepairRetryRequested")
    expect(more).toEqual([])
    expect(e).toMatchObject({
      type: "Normal",
      action: "Retry",
      reportingComponent: "kubectl-nodemend",
      reportingInstance: adminUser,
      involvedObject: { kind: "Node", name: node.name, uid: node.uid }
    })
    expect(e?.message).toContain(`${adminUser} asked for a new repair after failed repair ${record.id}`)
    // Nothing held any more.
    const status = await cli(kubeconfig, "status", "-l", `karpenter.sh/nodepool=${pool}`)
    expect(status.out).toContain("No pool is held by a failed repair.")
    // Again: there is nothing to retry now, and it says so.
    const again = await cli(kubeconfig, "retry", node.name)
    expect(again.code).toBe(1)
    expect(again.err).toContain(`no repair of ${node.name} is recorded in the journal`)
  })

  it("refuses a repair in flight, naming its phase, and changes nothing", async () => {
    const pool = uniqueName("pool")
    const node = await createTaintedNode(pool)
    const record = await writeJournal(node, pool, { phase: "Draining", finishedAt: undefined as never })
    for (const command of ["retry", "abandon"]) {
      const r = await cli(kubeconfig, command, node.name)
      expect(r.code).toBe(1)
      expect(r.err).toBe(
        `error: the repair of ${node.name} (${record.id}) is in flight, in phase Draining: ${command} acts only on a Failed repair, and the controller is still working on this one`
      )
    }
    expect(await journalExists(node.name)).toBe(true)
    expect(
      (await core.readNode({ name: node.name })).metadata?.annotations?.["nodemend.io/do-not-repair"]
    ).toBeUndefined()
    expect(await eventsAbout(node.name, "RepairRetryRequested")).toEqual([])
  })

  it("does not delete a record the controller wrote after it was read (resourceVersion precondition)", async () => {
    const pool = uniqueName("pool")
    const node = await createTaintedNode(pool)
    await writeJournal(node, pool, {})
    const out: string[] = []
    const attempt = runRepairAction(
      connect(kubeconfig),
      "retry",
      node.name,
      ns,
      (l) => out.push(l),
      async () => {
        // The controller writes the record between the plugin's read and its delete.
        await core.patchNamespacedConfigMap(
          {
            namespace: ns,
            name: `nodemend-repair-${node.name}`,
            body: { metadata: { annotations: { "test/rewritten": "yes" } } }
          },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
        )
      }
    )
    await expect(attempt).rejects.toThrow(PluginError)
    await expect(attempt).rejects.toThrow(`the journal record of ${node.name} changed after it was read`)
    expect(await journalExists(node.name)).toBe(true)
    expect(await eventsAbout(node.name, "RepairRetryRequested")).toEqual([])
  })
})

describe("kubectl nodemend abandon", () => {
  it("vetoes the node, deletes the Failed record, keeps the taint, and records it", async () => {
    const pool = uniqueName("pool")
    const node = await createTaintedNode(pool)
    const record = await writeJournal(node, pool, {})
    const r = await cli(kubeconfig, "abandon", node.name)
    expect(r.code, r.err).toBe(0)
    expect(r.out.split("\n")[0]).toBe(
      `annotated Node ${node.name} nodemend.io/do-not-repair=true (it is not repaired automatically again)`
    )
    expect(r.out).toContain(`deleted the journal record of failed repair ${record.id}`)
    expect(r.out).toContain(`kubectl taint node ${node.name} nodemend.io/repair:NoSchedule-`)
    expect(await journalExists(node.name)).toBe(false)
    const after = await core.readNode({ name: node.name })
    expect(after.metadata?.annotations?.["nodemend.io/do-not-repair"]).toBe("true")
    expect(await hasTaint(node.name)).toBe(true)
    const [e] = await eventsAbout(node.name, "RepairAbandoned")
    expect(e).toMatchObject({ type: "Normal", action: "Abandon", reportingComponent: "kubectl-nodemend" })
    expect(e?.message).toContain(`${adminUser} abandoned failed repair ${record.id}`)
    // The timeline shows it, as the unverified source it is.
    const tl = await cli(kubeconfig, "timeline", node.name)
    expect(tl.out).toMatch(
      new RegExp(
        `Event +unverified: kubectl-nodemend/${adminUser.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} +Normal RepairAbandoned: `
      )
    )
  })

  it("refuses without the permissions it needs, naming each, before changing anything", async () => {
    const pool = uniqueName("pool")
    const node = await createTaintedNode(pool)
    await writeJournal(node, pool, {})
    // An operator who may read and delete the journal, and nothing else.
    const sa = "journal-only"
    const saConfig = (
      await serviceAccountKubeconfig(
        { kc, core, rbac },
        ns,
        sa,
        ["get", "delete"],
        join(workDir, "journal-only.kubeconfig")
      )
    ).path
    const r = await cli(saConfig, "abandon", node.name)
    expect(r.code).toBe(1)
    expect(r.err).toContain(
      `error: system:serviceaccount:${ns}:${sa} may not abandon a repair: missing permissions get nodes/${node.name}`
    )
    expect(r.err).toContain(`patch nodes/${node.name}`)
    expect(r.err).toContain("create events.events.k8s.io in namespace default")
    expect(r.err).not.toContain("configmaps")
    expect(r.err).toContain("Nothing was changed.")
    expect(await journalExists(node.name)).toBe(true)
    expect(
      (await core.readNode({ name: node.name })).metadata?.annotations?.["nodemend.io/do-not-repair"]
    ).toBeUndefined()
  })
})
