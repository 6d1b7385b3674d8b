/**
 * The Kubernetes calls the controller makes, as an Effect service over @kubernetes/client-node. Each call
 * maps failures to `KubeError` and counts itself (API requests per repair is a bench figure).
 */
import type https from "node:https"
import {
  type Configuration,
  CoordinationV1Api,
  CoreV1Api,
  createConfiguration,
  EventsV1Api,
  KubeConfig,
  Observable,
  type ObservableMiddleware,
  ServerConfiguration,
  setHeaderMiddleware,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
  type V1ConfigMap,
  type V1Lease,
  type V1Node,
  type V1Pod
} from "@kubernetes/client-node"
import { Context, Effect, Layer } from "effect"
import { Agent } from "undici"
import { type KubeError, toKubeError } from "./KubeError.ts"
import { apiRequests } from "../observability/metrics.ts"
import { Metric } from "effect"

export interface NodeEventInput {
  readonly node: { readonly name: string; readonly uid?: string | undefined }
  readonly type: "Normal" | "Warning"
  readonly reason: string
  readonly action: string
  readonly note: string
}

export interface KubeShape {
  readonly kc: KubeConfig
  /** The pooled CoreV1Api (the informer lists through it). */
  readonly core: CoreV1Api
  readonly readNode: (name: string) => Effect.Effect<V1Node, KubeError>
  readonly createNode: (body: V1Node) => Effect.Effect<V1Node, KubeError>
  readonly deleteNode: (name: string, uid?: string) => Effect.Effect<void, KubeError>
  /** Merge patch of metadata.annotations; `null` removes a key. */
  readonly patchNodeAnnotations: (
    name: string,
    annotations: Record<string, string | null>
  ) => Effect.Effect<V1Node, KubeError>
  /** JSON patch guarded by `test /metadata/resourceVersion` (taints have no merge key). */
  readonly jsonPatchNode: (name: string, ops: ReadonlyArray<object>) => Effect.Effect<V1Node, KubeError>
  readonly patchNodeStatus: (name: string, status: object) => Effect.Effect<V1Node, KubeError>
  readonly listPodsOnNode: (nodeName: string) => Effect.Effect<ReadonlyArray<V1Pod>, KubeError>
  readonly evictPod: (namespace: string, name: string, uid: string) => Effect.Effect<void, KubeError>
  readonly deletePod: (
    namespace: string,
    name: string,
    uid: string,
    gracePeriodSeconds: number
  ) => Effect.Effect<void, KubeError>
  readonly readConfigMap: (namespace: string, name: string) => Effect.Effect<V1ConfigMap, KubeError>
  readonly listConfigMaps: (
    namespace: string,
    labelSelector: string
  ) => Effect.Effect<ReadonlyArray<V1ConfigMap>, KubeError>
  /** Create, or replace on AlreadyExists. */
  readonly upsertConfigMap: (body: V1ConfigMap) => Effect.Effect<void, KubeError>
  readonly deleteConfigMap: (namespace: string, name: string) => Effect.Effect<void, KubeError>
  /** `at`: when it happened (default now); events may be written a moment later. */
  readonly emitNodeEvent: (namespace: string, e: NodeEventInput, at?: Date) => Effect.Effect<void, KubeError>
  readonly readLease: (namespace: string, name: string) => Effect.Effect<V1Lease, KubeError>
  readonly createLease: (namespace: string, body: V1Lease) => Effect.Effect<V1Lease, KubeError>
  readonly replaceLease: (namespace: string, name: string, body: V1Lease) => Effect.Effect<V1Lease, KubeError>
}

export class Kube extends Context.Service<Kube, KubeShape>()("nodemend/Kube") {}

export const REPORTING_CONTROLLER = "nodemend.io/repair-controller"

const call = <A>(operation: string, verb: string, f: () => Promise<A>): Effect.Effect<A, KubeError> =>
  Metric.update(Metric.withAttributes(apiRequests, { verb, operation }), 1).pipe(
    Effect.andThen(Effect.tryPromise({ try: f, catch: (e) => toKubeError(operation, e) }))
  )

const smp = setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch)
const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch)
const json = setHeaderOptions("Content-Type", PatchStrategy.JsonPatch)

/**
 * One keep-alive connection pool for every API call. client-node 2.0.1 builds a new undici Agent per request
 * when the cluster entry has TLS settings (every real kubeconfig), so without this each call pays a TLS
 * handshake on both ends (k8s-client-node-notes.md section 11).
 */
export const makeSharedAgent = async (kc: KubeConfig): Promise<Agent> => {
  const t: https.RequestOptions = {}
  await kc.applyToHTTPSOptions(t)
  return new Agent({
    connect: {
      ca: t.ca,
      cert: t.cert,
      key: t.key,
      ...(t.rejectUnauthorized !== undefined ? { rejectUnauthorized: t.rejectUnauthorized } : {}),
      ...(t.servername !== undefined ? { servername: t.servername } : {})
    },
    keepAliveTimeout: 30_000,
    connections: 64
  })
}

const apiClient = <T>(
  kc: KubeConfig,
  Api: new (c: Configuration) => T,
  agent: Agent | undefined,
  userAgent: string
): T => {
  if (agent === undefined) return kc.makeApiClient(Api as never) as T
  const server = kc.getCurrentCluster()?.server ?? ""
  const useAgent: ObservableMiddleware = {
    pre: (ctx) => {
      ctx.setDispatcher(agent)
      return new Observable(Promise.resolve(ctx))
    },
    post: (r) => new Observable(Promise.resolve(r))
  }
  return new Api(
    createConfiguration({
      baseServer: new ServerConfiguration(server, {}),
      authMethods: { default: kc },
      middleware: [setHeaderMiddleware("User-Agent", userAgent), useAgent]
    })
  )
}

export const makeKube = (kc: KubeConfig, instance: string, agent?: Agent): KubeShape => {
  const ua = "nodemend-controller/0.1"
  const core = apiClient(kc, CoreV1Api, agent, ua)
  const coord = apiClient(kc, CoordinationV1Api, agent, ua)
  const events = apiClient(kc, EventsV1Api, agent, ua)
  return {
    kc,
    core,
    readNode: (name) => call("readNode", "get", () => core.readNode({ name })),
    createNode: (body) => call("createNode", "create", () => core.createNode({ body })),
    deleteNode: (name, uid) =>
      call("deleteNode", "delete", () =>
        core.deleteNode({ name, body: uid !== undefined ? { preconditions: { uid } } : {} })
      ).pipe(Effect.asVoid),
    patchNodeAnnotations: (name, annotations) =>
      call("patchNode", "patch", () => core.patchNode({ name, body: { metadata: { annotations } } }, merge)),
    jsonPatchNode: (name, ops) => call("patchNode", "patch", () => core.patchNode({ name, body: ops }, json)),
    patchNodeStatus: (name, status) =>
      call("patchNodeStatus", "patch", () => core.patchNodeStatus({ name, body: { status } }, smp)),
    listPodsOnNode: (nodeName) =>
      call("listPods", "list", () =>
        core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` })
      ).pipe(Effect.map((l) => l.items)),
    evictPod: (namespace, name, uid) =>
      call("evictPod", "create", () =>
        core.createNamespacedPodEviction({
          name,
          namespace,
          body: {
            apiVersion: "policy/v1",
            kind: "Eviction",
            metadata: { name, namespace },
            deleteOptions: { preconditions: { uid } }
          }
        })
      ).pipe(Effect.asVoid),
    deletePod: (namespace, name, uid, gracePeriodSeconds) =>
      call("deletePod", "delete", () =>
        core.deleteNamespacedPod({
          name,
          namespace,
          gracePeriodSeconds,
          body: { preconditions: { uid }, gracePeriodSeconds }
        })
      ).pipe(Effect.asVoid),
    readConfigMap: (namespace, name) =>
      call("readConfigMap", "get", () => core.readNamespacedConfigMap({ name, namespace })),
    listConfigMaps: (namespace, labelSelector) =>
      call("listConfigMaps", "list", () => core.listNamespacedConfigMap({ namespace, labelSelector })).pipe(
        Effect.map((l) => l.items)
      ),
    upsertConfigMap: (body) => {
      const namespace = body.metadata?.namespace ?? "default"
      const name = body.metadata?.name ?? ""
      return call("createConfigMap", "create", () =>
        core.createNamespacedConfigMap({ namespace, body })
      ).pipe(
        Effect.catchTag("KubeError", (e) =>
          e.code === 409
            ? call("patchConfigMap", "patch", () =>
                core.patchNamespacedConfigMap(
                  { name, namespace, body: { metadata: { labels: body.metadata?.labels }, data: body.data } },
                  merge
                )
              )
            : Effect.fail(e)
        ),
        Effect.asVoid
      )
    },
    deleteConfigMap: (namespace, name) =>
      call("deleteConfigMap", "delete", () => core.deleteNamespacedConfigMap({ name, namespace })).pipe(
        Effect.asVoid,
        Effect.catchTag("KubeError", (e) => (e.code === 404 ? Effect.void : Effect.fail(e)))
      ),
    emitNodeEvent: (namespace, e, at) =>
      call("createEvent", "create", () =>
        events.createNamespacedEvent({
          namespace,
          body: {
            apiVersion: "events.k8s.io/v1",
            kind: "Event",
            // As client-go names them: <object>.<hex nanoseconds>, plus a random suffix against same-ms collisions.
            metadata: {
              name: `${e.node.name.slice(0, 200)}.${(BigInt(Date.now()) * 1_000_000n).toString(16)}${Math.random().toString(16).slice(2, 6)}`,
              namespace
            },
            eventTime: new V1MicroTime((at ?? new Date()).getTime()),
            regarding: { apiVersion: "v1", kind: "Node", name: e.node.name, uid: e.node.uid },
            type: e.type,
            reason: e.reason,
            action: e.action,
            note: e.note.slice(0, 1024),
            reportingController: REPORTING_CONTROLLER,
            reportingInstance: instance.slice(0, 128)
          }
        })
      ).pipe(Effect.asVoid),
    readLease: (namespace, name) =>
      call("readLease", "get", () => coord.readNamespacedLease({ name, namespace })),
    createLease: (namespace, body) =>
      call("createLease", "create", () => coord.createNamespacedLease({ namespace, body })),
    replaceLease: (namespace, name, body) =>
      call("replaceLease", "update", () => coord.replaceNamespacedLease({ name, namespace, body }))
  }
}

export const loadKubeConfig = (path: string | undefined): KubeConfig => {
  const kc = new KubeConfig()
  if (path) kc.loadFromFile(path)
  else if (process.env.KUBERNETES_SERVICE_HOST) kc.loadFromCluster()
  else kc.loadFromDefault()
  const server = kc.getCurrentCluster()?.server
  if (!server || server === "http://localhost:8080")
    throw new Error("no kubeconfig or in-cluster config found")
  return kc
}

export const kubeLayer = (kc: KubeConfig, instance: string): Layer.Layer<Kube> =>
  Layer.succeed(Kube, Kube.of(makeKube(kc, instance)))

/** True for a KubeError with one of the given HTTP codes. */
export const isCode =
  (...codes: number[]) =>
  (e: KubeError): boolean =>
    e.code !== undefined && codes.includes(e.code)
