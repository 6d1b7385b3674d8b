// A customer's automation, with @nodemend/reason-codes installed from its tarball, reads a real Node from the
// API server (the JSON exactly as the server sends it, like `kubectl get node -o json`) and turns its
// conditions into typed findings: strict TypeScript (ESM), CommonJS, and the docs/examples.
import { writeFileSync } from "node:fs"
import { get } from "node:https"
import { join } from "node:path"
import type { KubeConfig } from "@kubernetes/client-node"
import {
  clients,
  createFakeNode,
  deleteNode,
  patchNodeCondition,
  uniqueName
} from "@nodemend/cluster-harness"
import { afterAll, beforeAll, expect, it } from "vitest"
import { CATALOG } from "../../src/catalog.ts"
import { REPAIR_TAINT_EFFECT, REPAIR_TAINT_KEY } from "../../src/keys.ts"
import { compileStrict, type CustomerProject, packAndInstall, TYPED_FINDINGS } from "../packed.ts"

const { kc, core } = clients()
const name = uniqueName("rc-customer")
let project: CustomerProject

/** GET of the Node, the response body untouched by any client library. */
const rawNode = async (kubeconfig: KubeConfig, node: string): Promise<string> => {
  const opts: Parameters<typeof get>[1] = {}
  await kubeconfig.applyToHTTPSOptions(opts)
  const server = kubeconfig.getCurrentCluster()?.server
  if (server === undefined) throw new Error("kubeconfig has no current cluster")
  return new Promise((resolve, reject) => {
    get(new URL(`/api/v1/nodes/${node}`, server), opts, (res) => {
      let body = ""
      res.setEncoding("utf8")
      res.on("data", (d: string) => {
        body += d
      })
      res.on("end", () =>
        res.statusCode === 200
          ? resolve(body)
          : reject(new Error(`GET node ${node}: ${res.statusCode} ${body}`))
      )
    }).on("error", reject)
  })
}

beforeAll(async () => {
  project = packAndInstall()
  writeFileSync(join(project.app, "typed.mts"), TYPED_FINDINGS)
  compileStrict(project, ["typed.mts", "route-alerts.ts"])
  await createFakeNode(core, {
    name,
    managed: false,
    taints: [{ key: REPAIR_TAINT_KEY, effect: REPAIR_TAINT_EFFECT }]
  })
  const now = new Date()
  for (const [type, status, reason] of [
    ["AcceleratedHardwareReady", "False", "NvidiaXID79Error"],
    ["KernelReady", "False", "ForkFailedOutOfPIDs"],
    ["StorageReady", "True", "DiskIsReady"],
    ["NetworkingReady", "False", "FromTheFuture"]
  ] as const)
    await patchNodeCondition(core, name, {
      type,
      status,
      reason,
      message: `${reason} on ${name}`,
      lastHeartbeatTime: now,
      lastTransitionTime: now
    })
})

afterAll(async () => {
  await deleteNode(core, name)
  project?.remove()
})

it("typed findings from a real Node, in strict TypeScript (ESM), CommonJS and the examples", async () => {
  const node = await rawNode(kc, name)
  expect(JSON.parse(node).status.conditions.map((c: { type: string }) => c.type)).toEqual(
    expect.arrayContaining(["AcceleratedHardwareReady", "KernelReady", "StorageReady", "NetworkingReady"])
  )

  // The API server keeps conditions in its own order: compare as sets.
  const sameItems = (actual: readonly unknown[], expected: readonly unknown[]) => {
    expect(actual).toHaveLength(expected.length)
    expect(actual).toEqual(expect.arrayContaining([...expected]))
  }
  const xid79 = {
    conditionType: "AcceleratedHardwareReady",
    code: "NvidiaXID{code}Error",
    params: { code: 79 }
  }
  const fork = { conditionType: "KernelReady", code: "ForkFailedOutOfPIDs", params: {} }
  const typed = JSON.parse(project.run("out/typed.mjs", node))
  expect(typed).toMatchObject({ entries: CATALOG.length, taint: REPAIR_TAINT_KEY })
  sameItems(typed.findings, [
    { ...xid79, reason: "NvidiaXID79Error", severity: "Condition", action: "Reboot" },
    { ...fork, reason: "ForkFailedOutOfPIDs", severity: "Condition", action: "Replace" }
  ])
  const cjs = JSON.parse(project.run("node-findings.cjs", node))
  expect(cjs.underRepair).toBe(true)
  sameItems(cjs.findings, [
    { ...xid79, status: "False", severity: "Condition", fatal: true, action: "Reboot" },
    { ...fork, status: "False", severity: "Condition", fatal: true, action: "Replace" }
  ])
  sameItems(JSON.parse(project.run("out/route-alerts.js", node)), [
    { reason: "NvidiaXID79Error", to: "gpu-oncall", page: true },
    { reason: "ForkFailedOutOfPIDs", to: "os", page: true },
    { reason: "FromTheFuture", to: "network", page: false }
  ])
})
