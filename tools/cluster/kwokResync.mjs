// The second look at a Pod that kwok (v0.8.0) dropped: kwok has no periodic pod sync (a kubelet re-syncs each of
// its pods every --sync-frequency, 1 min), so a Pod event it skips is never looked at again.
//
// Why kwok drops one (sigs.k8s.io/kwok@v0.8.0, pkg/kwok/controllers):
// - controller.go 288-291: with node leases (our --node-lease-duration-seconds=40) a Node is read-only unless its
//   Lease *in kwok's lease informer cache* names kwok as holder (node_lease_controller.go 169-176, Held); that
//   informer has no event handler (controller.go 241-243), so nothing reacts when a Lease lands in the cache.
// - pod_controller.go 498-505 (watchResources): a Pod event for a read-only Node is skipped ("Skip pod", reason
//   "read only", a debug line) and not queued again.
// - The one re-list of a Node's Pods (controller.go 279-282 and 580-610, podsOnNodeSyncWorker) is queued right
//   after kwok *creates* the Lease (node_lease_controller.go 204-224), before its own lease watch has necessarily
//   delivered it; later renewals re-list nothing (only a first sync or a holder change does, 198-199).
// So a Pod bound to a new Node while kwok's lease watch lags its pod watch is never played: it stays Pending. After
// kube-apiserver restarts the lag is seconds to a minute: every client-go reflector backs off on its own (800 ms
// doubling to 30 s, jitter 1.0, reset 2 min after its last reset; client-go v0.37.2 tools/cache/reflector.go 60-67
// and apimachinery wait/backoff.go 292-304), so kwok's pod watch may be back while its lease watch still sleeps.
// (Whether kwok's pod controller checks the Lease at all depends on Go's map order when kwok starts its stage
// controllers, controller.go 561 and 484: about every other kwok process.) docs/reliability.md has the repro.
//
// A Pod is proven dropped, not merely late, when kwok has since renewed its Node's Lease: kwok renews only a Lease
// its cache holds (node_lease_controller.go 188-201), and once it does, any new event of the Pod is played. So
// resync gives each such Pod that new event (an annotation), which is the retry kwok lacks; a Pod whose Lease was
// not renewed since it was created is left alone (kwok may still play it when its watches catch up).
import { readFileSync } from "node:fs"
import { request } from "node:https"
import { join } from "node:path"
import { FAKE_NODE_LABEL, FAKE_NODE_VALUE, defaultStateDir } from "./cluster.mjs"

/** The annotation resync writes (the time of the resync): a Pod event kwok then plays. */
export const KWOK_RESYNC_ANNOTATION = "nodemend.io/kwok-resync"

/** creationTimestamp has whole seconds: an object created at t shows t truncated, so add 1 s to compare. */
const SECOND = 1000

function call(stateDir, method, path, body) {
  const pki = join(stateDir, "pki")
  const { server } = JSON.parse(readFileSync(join(stateDir, "cluster.json"), "utf8"))
  return new Promise((res, rej) => {
    const req = request(
      `${server}${path}`,
      {
        method,
        timeout: 5000,
        ca: readFileSync(join(pki, "ca.crt")),
        cert: readFileSync(join(pki, "admin.crt")),
        key: readFileSync(join(pki, "admin.key")),
        headers: body === undefined ? {} : { "content-type": "application/merge-patch+json" }
      },
      (r) => {
        let text = ""
        r.on("data", (d) => {
          text += d
        })
        r.on("end", () =>
          r.statusCode === 200
            ? res(JSON.parse(text))
            : rej(new Error(`${method} ${path}: ${r.statusCode} ${text}`))
        )
      }
    )
    req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timeout`)))
    req.on("error", rej)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })
}

const ms = (t) => (t ? Date.parse(t) : Number.NaN)

/** The Pods kwok has provably dropped (see the top of this file). Pure: the listed Pods, Nodes and Leases. */
export function droppedPods(pods, nodes, leases, now = Date.now(), minAgeMs = 5000) {
  const managed = new Set(
    nodes.filter((n) => n.metadata?.labels?.[FAKE_NODE_LABEL] === FAKE_NODE_VALUE).map((n) => n.metadata.name)
  )
  const lease = new Map(leases.map((l) => [l.metadata.name, l]))
  return pods.filter((p) => {
    const created = ms(p.metadata?.creationTimestamp) + SECOND
    const l = lease.get(p.spec?.nodeName)
    const renewed = ms(l?.spec?.renewTime)
    return (
      p.status?.phase === "Pending" &&
      !p.metadata?.deletionTimestamp &&
      managed.has(p.spec?.nodeName) &&
      now - created >= minAgeMs &&
      Boolean(l?.spec?.holderIdentity) &&
      renewed > ms(l.metadata?.creationTimestamp) + SECOND &&
      renewed > created
    )
  })
}

/**
 * Finds the Pods kwok dropped on this cluster (state dir `stateDir`; only `namespace`'s when given) and gives each
 * the event kwok then plays. Returns their `namespace/name`. Safe to call at any time: a Pod kwok has not provably
 * dropped is not touched.
 */
export async function resyncDroppedPods({ stateDir = defaultStateDir(), namespace, minAgeMs = 5000 } = {}) {
  const scope = namespace === undefined ? "" : `/namespaces/${encodeURIComponent(namespace)}`
  const [pods, nodes, leases] = await Promise.all([
    call(stateDir, "GET", `/api/v1${scope}/pods?fieldSelector=status.phase%3DPending,spec.nodeName!%3D`),
    call(
      stateDir,
      "GET",
      `/api/v1/nodes?labelSelector=${encodeURIComponent(`${FAKE_NODE_LABEL}=${FAKE_NODE_VALUE}`)}`
    ),
    call(stateDir, "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases")
  ])
  const dropped = droppedPods(pods.items, nodes.items, leases.items, Date.now(), minAgeMs)
  const at = new Date().toISOString()
  await Promise.all(
    dropped.map((p) =>
      call(stateDir, "PATCH", `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`, {
        metadata: { annotations: { [KWOK_RESYNC_ANNOTATION]: at } }
      })
    )
  )
  return dropped.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)
}
