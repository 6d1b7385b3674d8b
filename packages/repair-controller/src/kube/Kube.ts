/**
 * The Kubernetes calls the controller makes, as an Effect service over the shared client
 * (`@nodemend/kube-access`, ADR 0011). Each call fails with `KubeError` and counts itself (API requests per
 * repair is a bench figure).
 */
import { REPAIR_CONTROLLER_REPORTING_CONTROLLER } from "@nodemend/reason-codes"
import { Context, Effect, Layer, Metric } from "effect"
import { apiRequestsOf } from "../observability/metrics.ts"
import {
  continueParam,
  discoverKubeAccess,
  eventsPath,
  type KubeAccess,
  type KubeError,
  type KubeHttp,
  kubeAccessFromKubeconfig,
  type ListExpired,
  listAllPages,
  NODES_PATH,
  namespacedPath,
  nodeEventBody,
  nodePath,
  type ConfigMap,
  type Lease,
  type List,
  type Node,
  type Pod
} from "@nodemend/kube-access"
import { makeControllerHttp, makeLeaseHttp } from "./KubeHttp.ts"

export interface NodeEventInput {
  /** A Node, unless `apiVersion` and `kind` say otherwise (a Karpenter NodePool: controller/poolEvents.ts). */
  readonly node: {
    readonly name: string
    readonly uid?: string | undefined
    readonly apiVersion?: string
    readonly kind?: string
  }
  readonly type: "Normal" | "Warning"
  readonly reason: string
  readonly action: string
  readonly note: string
}

export interface KubeShape {
  /** The pooled HTTP client (the Node informer and log capture go through it). */
  readonly http: KubeHttp
  readonly readNode: (name: string) => Effect.Effect<Node, KubeError>
  readonly createNode: (body: Node) => Effect.Effect<Node, KubeError>
  readonly deleteNode: (name: string, uid?: string) => Effect.Effect<void, KubeError>
  /** Merge patch of metadata.annotations; `null` removes a key. */
  readonly patchNodeAnnotations: (
    name: string,
    annotations: Record<string, string | null>
  ) => Effect.Effect<Node, KubeError>
  /** JSON patch guarded by `test /metadata/resourceVersion` (taints have no merge key). */
  readonly jsonPatchNode: (name: string, ops: ReadonlyArray<object>) => Effect.Effect<Node, KubeError>
  readonly patchNodeStatus: (name: string, status: object) => Effect.Effect<Node, KubeError>
  /** Paged; an expired continue token restarts the list, a few times at most (then ListExpired). */
  readonly listPodsOnNode: (nodeName: string) => Effect.Effect<ReadonlyArray<Pod>, KubeError | ListExpired>
  readonly evictPod: (namespace: string, name: string, uid: string) => Effect.Effect<void, KubeError>
  readonly deletePod: (
    namespace: string,
    name: string,
    uid: string,
    gracePeriodSeconds: number
  ) => Effect.Effect<void, KubeError>
  readonly readConfigMap: (namespace: string, name: string) => Effect.Effect<ConfigMap, KubeError>
  readonly listConfigMaps: (
    namespace: string,
    labelSelector: string
  ) => Effect.Effect<ReadonlyArray<ConfigMap>, KubeError>
  /**
   * Create, or merge-patch when it exists (409). `exists`: the caller knows it does (a journal entry written
   * before): patched first, created only on a 404, one request instead of two.
   */
  readonly upsertConfigMap: (body: ConfigMap, exists?: boolean) => Effect.Effect<void, KubeError>
  readonly deleteConfigMap: (namespace: string, name: string) => Effect.Effect<void, KubeError>
  /** `at`: when it happened (default now); events may be written a moment later. */
  readonly emitNodeEvent: (namespace: string, e: NodeEventInput, at?: Date) => Effect.Effect<void, KubeError>
  /** The Lease's calls go over their own connection (kube/KubeHttp.ts `makeLeaseHttp`), never queued behind the pool's. */
  readonly readLease: (namespace: string, name: string) => Effect.Effect<Lease, KubeError>
  readonly createLease: (namespace: string, body: Lease) => Effect.Effect<Lease, KubeError>
  readonly replaceLease: (namespace: string, name: string, body: Lease) => Effect.Effect<Lease, KubeError>
}

export class Kube extends Context.Service<Kube, KubeShape>()("nodemend/Kube") {}

const enc = encodeURIComponent
const SMP = "application/strategic-merge-patch+json"
const MERGE = "application/merge-patch+json"
const JSON_PATCH = "application/json-patch+json"

/**
 * `podPageSize`: pods per page of a pod list (500, client-go's pager default; the cluster tests page by 2 to
 * get continue tokens from a handful of pods).
 */
export const makeKube = (access: KubeAccess, instance: string, podPageSize = 500): KubeShape =>
  kubeOver(makeControllerHttp(access), makeLeaseHttp(access), instance, podPageSize)

/** The calls over given connections: the API server's, or the what-if replay's in memory (whatif/memoryApiServer.ts). */
export const kubeOver = (
  http: KubeHttp,
  leaseHttp: KubeHttp,
  instance: string,
  podPageSize = 500
): KubeShape => {
  // One counter per verb and operation (a fixed set, named in this file), built once (metrics.ts apiRequestsOf):
  // the API is called thousands of times a minute under load.
  const counters = new Map<string, Metric.Counter<number>>()
  const counterOf = (verb: string, operation: string) => {
    const key = `${verb} ${operation}`
    let c = counters.get(key)
    if (c === undefined) {
      c = apiRequestsOf(verb, operation)
      counters.set(key, c)
    }
    return c
  }
  const callOn =
    (client: KubeHttp) =>
    <A>(
      operation: string,
      verb: string,
      method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
      path: string,
      body?: unknown,
      contentType?: string
    ): Effect.Effect<A, KubeError> =>
      Metric.update(counterOf(verb, operation), 1).pipe(
        Effect.andThen(client.call(operation, method, path, body, contentType) as Effect.Effect<A, KubeError>)
      )
  const call = callOn(http)
  const leaseCall = callOn(leaseHttp)
  const node = nodePath
  const cm = (namespace: string, name?: string) => namespacedPath("v1", "configmaps", namespace, name)
  const lease = (namespace: string, name?: string) =>
    namespacedPath("coordination.k8s.io/v1", "leases", namespace, name)
  const pod = (namespace: string, name: string) => namespacedPath("v1", "pods", namespace, name)

  // An expired continue token (410) restarts the list from the first page (pagedList.ts).
  const listPodsOnNode = (nodeName: string) =>
    listAllPages(
      "listPods",
      (cont) =>
        call<List<Pod>>(
          "listPods",
          "list",
          "GET",
          `/api/v1/pods?fieldSelector=${enc(`spec.nodeName=${nodeName}`)}&limit=${podPageSize}${continueParam(cont)}`
        ),
      (restart, e) =>
        Effect.logWarning("pod list continue token expired; listing again from the first page", {
          node: nodeName,
          restart,
          error: e.message
        })
    )

  return {
    http,
    readNode: (name) => call("readNode", "get", "GET", node(name)),
    createNode: (body) =>
      call("createNode", "create", "POST", NODES_PATH, { apiVersion: "v1", kind: "Node", ...body }),
    deleteNode: (name, uid) =>
      call("deleteNode", "delete", "DELETE", node(name), {
        apiVersion: "v1",
        kind: "DeleteOptions",
        ...(uid !== undefined ? { preconditions: { uid } } : {})
      }).pipe(Effect.asVoid),
    patchNodeAnnotations: (name, annotations) =>
      call("patchNode", "patch", "PATCH", node(name), { metadata: { annotations } }, MERGE),
    jsonPatchNode: (name, ops) => call("patchNode", "patch", "PATCH", node(name), ops, JSON_PATCH),
    patchNodeStatus: (name, status) =>
      call("patchNodeStatus", "patch", "PATCH", `${node(name)}/status`, { status }, SMP),
    listPodsOnNode,
    evictPod: (namespace, name, uid) =>
      call("evictPod", "create", "POST", `${pod(namespace, name)}/eviction`, {
        apiVersion: "policy/v1",
        kind: "Eviction",
        metadata: { name, namespace },
        deleteOptions: { preconditions: { uid } }
      }).pipe(Effect.asVoid),
    deletePod: (namespace, name, uid, gracePeriodSeconds) =>
      call(
        "deletePod",
        "delete",
        "DELETE",
        `${pod(namespace, name)}?gracePeriodSeconds=${gracePeriodSeconds}`,
        {
          apiVersion: "v1",
          kind: "DeleteOptions",
          preconditions: { uid },
          gracePeriodSeconds
        }
      ).pipe(Effect.asVoid),
    readConfigMap: (namespace, name) => call("readConfigMap", "get", "GET", cm(namespace, name)),
    listConfigMaps: (namespace, labelSelector) =>
      call<List<ConfigMap>>(
        "listConfigMaps",
        "list",
        "GET",
        `${cm(namespace)}?labelSelector=${enc(labelSelector)}`
      ).pipe(Effect.map((l) => l.items)),
    upsertConfigMap: (body, exists = false) => {
      const namespace = body.metadata?.namespace ?? "default"
      const name = body.metadata?.name ?? ""
      const create = call("createConfigMap", "create", "POST", cm(namespace), {
        apiVersion: "v1",
        kind: "ConfigMap",
        ...body
      })
      const patch = call(
        "patchConfigMap",
        "patch",
        "PATCH",
        cm(namespace, name),
        { metadata: { labels: body.metadata?.labels }, data: body.data },
        MERGE
      )
      const first = exists ? patch : create
      const second = exists ? create : patch
      return first.pipe(
        Effect.catchTag("KubeError", (e) => (e.code === (exists ? 404 : 409) ? second : Effect.fail(e))),
        Effect.asVoid
      )
    },
    deleteConfigMap: (namespace, name) =>
      call("deleteConfigMap", "delete", "DELETE", cm(namespace, name)).pipe(
        Effect.asVoid,
        Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.void : Effect.fail(e)))
      ),
    emitNodeEvent: (namespace, e, at) =>
      call(
        "createEvent",
        "create",
        "POST",
        eventsPath(namespace),
        nodeEventBody(
          {
            ...e,
            reportingController: REPAIR_CONTROLLER_REPORTING_CONTROLLER,
            reportingInstance: instance,
            ...(at !== undefined ? { atMs: at.getTime() } : {})
          },
          namespace
        )
      ).pipe(Effect.asVoid),
    readLease: (namespace, name) => leaseCall("readLease", "get", "GET", lease(namespace, name)),
    createLease: (namespace, body) =>
      leaseCall("createLease", "create", "POST", lease(namespace), {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        ...body
      }),
    replaceLease: (namespace, name, body) =>
      leaseCall("replaceLease", "update", "PUT", lease(namespace, name), {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        ...body
      })
  }
}

/**
 * Credentials: `--kubeconfig`, else $KUBECONFIG, else the in-cluster service account, else ~/.kube/config.
 * Returns the access and the file it came from (undefined in-cluster).
 */
export const loadKubeAccess = (
  path: string | undefined
): { readonly access: KubeAccess; readonly path: string | undefined } => {
  const found = discoverKubeAccess({ path, inClusterFirst: true })
  return { access: found.access, path: found.paths[0] }
}

export const kubeLayer = (kubeconfigPath: string, instance: string): Layer.Layer<Kube> =>
  Layer.succeed(Kube, Kube.of(makeKube(kubeAccessFromKubeconfig(kubeconfigPath), instance)))
