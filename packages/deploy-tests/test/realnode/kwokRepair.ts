// The in-cluster controller's repair of a kwok node, as the real-node and kind tests set it up and check it: the
// chart's controller config that repairs only kwok nodes, and what a repair leaves behind.
import type { CoreV1Api } from "@kubernetes/client-node"
import { deleteNode, errorCode, waitFor } from "@nodemend/cluster-harness"

/** Only kwok nodes are the controller's to repair; the toleration shortened so the test sees the repair. */
export const KWOK_REPAIR_CONFIG = {
  nodeSelector: "kwok.x-k8s.io/node=fake",
  policies: [
    {
      conditionType: "AcceleratedHardwareReady",
      status: "False",
      tolerationSeconds: 2,
      captureLogs: false
    }
  ]
}

/** With the kwok provider a repair ends in the Node's deletion. */
export const waitForRepairedAway = (core: CoreV1Api, node: string) =>
  waitFor(
    "the kwok node deleted by the controller's repair",
    async () =>
      core.readNode({ name: node }).then(
        () => false,
        (e) => errorCode(e) === 404
      ),
    { timeoutMs: 120_000, intervalMs: 500 }
  )

/** The Nodes the controller launched to replace `node` (capacity first: before its drain). */
export const replacementsOf = async (core: CoreV1Api, node: string) =>
  (await core.listNode({ labelSelector: `nodemend.io/replacement-of=${node}` })).items

/** The reasons of the Events the repair controller recorded on `node`. */
export const controllerEventReasons = async (core: CoreV1Api, node: string) =>
  (
    await core.listNamespacedEvent({ namespace: "default", fieldSelector: `involvedObject.name=${node}` })
  ).items
    .filter((e) => e.reportingComponent === "nodemend.io/repair-controller")
    .map((e) => e.reason)

/** Deletes a kwok node and its replacements: no kwok node is left for later tests. */
export const deleteWithReplacements = async (core: CoreV1Api, node: string) => {
  await deleteNode(core, node).catch(() => undefined)
  for (const r of await replacementsOf(core, node))
    await deleteNode(core, r.metadata!.name!).catch(() => undefined)
}
