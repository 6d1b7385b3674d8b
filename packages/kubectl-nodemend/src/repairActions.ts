/**
 * `kubectl nodemend retry <node>` and `kubectl nodemend abandon <node>`: an operator's answer to a Failed repair.
 *
 * A Failed repair keeps its journal record (repairJournal.ts) and the node's nodemend taint, and holds a slot of
 * its pool's in-flight budget until someone acts. Both commands act only on a record in phase Failed, delete it
 * with the ConfigMap's uid and resourceVersion as preconditions (a record the controller or another operator wrote
 * after it was read is not deleted), keep the taint, and record what they did as an Event on the Node:
 * - retry: the controller, finding a still-unhealthy node without a record, starts a fresh repair when its policy
 *   says so (within about 10 s: it rereads a failed record every 10 s);
 * - abandon: the Node is first annotated `nodemend.io/do-not-repair=true` (the controller's veto), so that it is
 *   never repaired automatically again; the operator fixes the node by hand and uncordons it.
 * Before anything changes, every permission the command needs is checked with SelfSubjectAccessReviews and a
 * missing one is named. The decisions are pure functions; `runRepairAction` does the calls.
 */
import { hostname } from "node:os"
import {
  type ConfigMap,
  eventsPath,
  type KubeHttp,
  NODE_EVENT_NAMESPACE,
  type Node,
  namespacedPath,
  nodeEventBody,
  nodePath
} from "@nodemend/kube-access"
import { DO_NOT_REPAIR_ANNOTATION, REPAIR_TAINT_EFFECT, REPAIR_TAINT_KEY } from "@nodemend/reason-codes"
import { parseRecord, type RepairRecord } from "@nodemend/repair-controller"
import { Effect, Result } from "effect"
import { k8sCode, k8sMessage, PluginError } from "./errors.ts"
import { DEFAULT_CONTROLLER_NAMESPACE, journalName } from "./repairJournal.ts"

export type RepairCommand = "retry" | "abandon"

/** reportingController of the plugin's Events. Not identity-checked: the user is named in the note. */
export const PLUGIN_REPORTING_CONTROLLER = "kubectl-nodemend"

export const EVENT_REASON: Record<RepairCommand, string> = {
  retry: "RepairRetryRequested",
  abandon: "RepairAbandoned"
}
const EVENT_ACTION: Record<RepairCommand, string> = { retry: "Retry", abandon: "Abandon" }

/** One SelfSubjectAccessReview's resource attributes. */
export interface Permission {
  readonly verb: string
  readonly group: string
  readonly resource: string
  readonly namespace?: string
  readonly name?: string
}

/** Every permission the command uses, in the order it uses them. */
export const permissionsFor = (
  command: RepairCommand,
  nodeName: string,
  controllerNamespace: string
): Permission[] => {
  const record = {
    group: "",
    resource: "configmaps",
    namespace: controllerNamespace,
    name: journalName(nodeName)
  }
  return [
    { verb: "get", ...record },
    { verb: "get", group: "", resource: "nodes", name: nodeName },
    ...(command === "abandon" ? [{ verb: "patch", group: "", resource: "nodes", name: nodeName }] : []),
    { verb: "delete", ...record },
    { verb: "create", group: "events.k8s.io", resource: "events", namespace: NODE_EVENT_NAMESPACE }
  ]
}

/** `delete configmaps/nodemend-repair-n in namespace nodemend-system`, as kubectl auth can-i spells it. */
export const describePermission = (p: Permission): string =>
  `${p.verb} ${p.group ? `${p.resource}.${p.group}` : p.resource}${p.name ? `/${p.name}` : ""}${p.namespace ? ` in namespace ${p.namespace}` : ""}`

export const selfSubjectAccessReview = (p: Permission) => ({
  apiVersion: "authorization.k8s.io/v1",
  kind: "SelfSubjectAccessReview",
  spec: {
    resourceAttributes: {
      verb: p.verb,
      group: p.group,
      resource: p.resource,
      ...(p.namespace !== undefined ? { namespace: p.namespace } : {}),
      ...(p.name !== undefined ? { name: p.name } : {})
    }
  }
})

export const hasRepairTaint = (node: Node | undefined): boolean =>
  (node?.spec?.taints ?? []).some((t) => t.key === REPAIR_TAINT_KEY && t.effect === REPAIR_TAINT_EFFECT)

export type Plan =
  | { readonly _tag: "Refuse"; readonly message: string }
  | {
      readonly _tag: "Act"
      readonly record: RepairRecord
      /** The journal ConfigMap as read: its deletion's preconditions. */
      readonly configMap: { readonly name: string; readonly uid: string; readonly resourceVersion: string }
      /** The Node the repair started on still exists (same name and uid). */
      readonly sameNode: boolean
      /** abandon, on that Node, not annotated yet. */
      readonly annotate: boolean
    }

const IN_FLIGHT = (phase: string) => phase !== "Succeeded" && phase !== "Failed"

/** What the command does with this journal entry and Node (undefined: not found), or why it refuses. */
export const planRepairAction = (
  command: RepairCommand,
  nodeName: string,
  controllerNamespace: string,
  configMap: ConfigMap | undefined,
  node: Node | undefined
): Plan => {
  const cmName = journalName(nodeName)
  const where = `ConfigMap ${controllerNamespace}/${cmName}`
  if (configMap === undefined)
    return {
      _tag: "Refuse",
      message: `no repair of ${nodeName} is recorded in the journal (${where} not found): nothing to ${command}`
    }
  const parsed = parseRecord(configMap.data?.record ?? "")
  if (Result.isFailure(parsed))
    return {
      _tag: "Refuse",
      message: `the journal entry of ${nodeName} (${where}) is not a repair record the controller can read (${parsed.failure}); ${command} acts only on a Failed repair: inspect it with kubectl -n ${controllerNamespace} get configmap ${cmName} -o yaml`
    }
  const record = parsed.success
  if (record.node.name !== nodeName)
    return {
      _tag: "Refuse",
      message: `${where} records a repair of ${record.node.name}, not ${nodeName}; the controller ignores it, and so does ${command}`
    }
  if (record.phase !== "Failed")
    return {
      _tag: "Refuse",
      message: IN_FLIGHT(record.phase)
        ? `the repair of ${nodeName} (${record.id}) is in flight, in phase ${record.phase}: ${command} acts only on a Failed repair, and the controller is still working on this one`
        : `the repair of ${nodeName} (${record.id}) ended ${record.phase}, not Failed: ${command} acts only on a Failed repair`
    }
  const uid = configMap.metadata?.uid
  const resourceVersion = configMap.metadata?.resourceVersion
  if (!uid || !resourceVersion)
    return { _tag: "Refuse", message: `${where} has no uid or resourceVersion; refusing to delete it blind` }
  const sameNode = node !== undefined && node.metadata?.uid === record.node.uid
  return {
    _tag: "Act",
    record,
    configMap: { name: cmName, uid, resourceVersion },
    sameNode,
    annotate:
      command === "abandon" && sameNode && node?.metadata?.annotations?.[DO_NOT_REPAIR_ANNOTATION] !== "true"
  }
}

/** The Event's note: who did what to which repair, and what happens next. */
export const actionNote = (
  command: RepairCommand,
  record: RepairRecord,
  user: string | undefined
): string => {
  const who = user ?? "an unidentified user"
  const failed = `failed repair ${record.id} (${record.reason}; ${record.failure ?? "no failure recorded"})`
  return (
    command === "retry"
      ? `${who} asked for a new repair after ${failed} with kubectl nodemend retry: its journal record was deleted and the node keeps its taint; the controller repairs it again if it is still unhealthy`
      : `${who} abandoned ${failed} with kubectl nodemend abandon: its journal record was deleted and the node annotated ${DO_NOT_REPAIR_ANNOTATION}=true; it keeps its taint until it is fixed and uncordoned by hand`
  ).slice(0, 1024)
}

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many)

/** The error for missing permissions: each named as `kubectl auth can-i` would ask for it. */
export const missingPermissionsMessage = (
  command: RepairCommand | "release",
  user: string | undefined,
  missing: ReadonlyArray<{ readonly permission: Permission; readonly reason?: string }>
): string =>
  `${user ?? "you"} may not ${command === "release" ? "release a relapse hold" : `${command} a repair`}: missing ${plural(missing.length, "permission", "permissions")} ${missing
    .map((m) => `${describePermission(m.permission)}${m.reason ? ` (${m.reason})` : ""}`)
    .join("; ")}. Nothing was changed.`

/** The flag that names a namespace other than the default, for the commands the plugin suggests. */
export const namespaceFlag = (controllerNamespace: string): string =>
  controllerNamespace === DEFAULT_CONTROLLER_NAMESPACE ? "" : ` --controller-namespace ${controllerNamespace}`

const MERGE = "application/merge-patch+json"

export const call = <A>(
  kube: KubeHttp,
  operation: string,
  method: Parameters<KubeHttp["call"]>[1],
  path: string,
  body?: unknown,
  contentType?: string
) => Effect.runPromise(kube.call(operation, method, path, body, contentType)) as Promise<A>

export const orNotFound = <A>(p: Promise<A>): Promise<A | undefined> =>
  p.catch((e: unknown) => {
    if (k8sCode(e) === 404) return undefined
    throw e
  })

/** The caller's user name from a SelfSubjectReview; undefined when the API server does not say. */
export const whoAmI = async (kube: KubeHttp): Promise<string | undefined> => {
  const r = await call<{ status?: { userInfo?: { username?: string } } }>(
    kube,
    "self subject review",
    "POST",
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" }
  ).catch(() => undefined)
  return r?.status?.userInfo?.username || undefined
}

export const missingPermissions = async (kube: KubeHttp, permissions: ReadonlyArray<Permission>) => {
  const answers = await Promise.all(
    permissions.map((permission) =>
      call<{ status?: { allowed?: boolean; reason?: string } }>(
        kube,
        `access review: ${describePermission(permission)}`,
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        selfSubjectAccessReview(permission)
      ).then((r) => ({
        permission,
        allowed: r.status?.allowed === true,
        reason: r.status?.reason || undefined
      }))
    )
  )
  return answers.filter((a) => !a.allowed)
}

/**
 * Checks every permission a command uses before it changes anything (SelfSubjectAccessReviews) and refuses with
 * the missing ones named; resolves to the caller's user name for the command's Event.
 */
export const requirePermissions = async (
  kube: KubeHttp,
  command: RepairCommand | "release",
  permissions: ReadonlyArray<Permission>
): Promise<string | undefined> => {
  const user = await whoAmI(kube)
  const missing = await missingPermissions(kube, permissions)
  if (missing.length > 0) throw new PluginError(missingPermissionsMessage(command, user, missing))
  return user
}

/**
 * Runs `retry` or `abandon` for one node and prints each thing it did. Returns the exit code: 0 when everything
 * was done, 1 when the record was deleted but the Event could not be written (said so); refusals and failures
 * before the deletion throw a PluginError (nothing, or only the annotation, was changed: the message says which).
 */
export const runRepairAction = async (
  kube: KubeHttp,
  command: RepairCommand,
  nodeName: string,
  controllerNamespace: string,
  out: (line: string) => void,
  /** Test seam: runs after the record and the Node were read, before anything is written. */
  afterRead: () => Promise<void> = async () => undefined
): Promise<number> => {
  const user = await requirePermissions(kube, command, permissionsFor(command, nodeName, controllerNamespace))

  const cmName = journalName(nodeName)
  const [configMap, node] = await Promise.all([
    orNotFound(
      call<ConfigMap>(
        kube,
        "read repair journal",
        "GET",
        namespacedPath("v1", "configmaps", controllerNamespace, cmName)
      )
    ),
    orNotFound(call<Node>(kube, "read node", "GET", nodePath(nodeName)))
  ])
  const plan = planRepairAction(command, nodeName, controllerNamespace, configMap, node)
  if (plan._tag === "Refuse") throw new PluginError(plan.message)
  const { record } = plan
  await afterRead()

  // abandon: the veto first. Were the record deleted first and the annotation then refused, the controller could
  // start the repair the operator meant to abandon. The uid in the patch makes it fail on another Node of the name.
  if (plan.annotate) {
    await call(
      kube,
      "annotate node",
      "PATCH",
      nodePath(nodeName),
      { metadata: { uid: record.node.uid, annotations: { [DO_NOT_REPAIR_ANNOTATION]: "true" } } },
      MERGE
    )
    out(
      `annotated Node ${nodeName} ${DO_NOT_REPAIR_ANNOTATION}=true (it is not repaired automatically again)`
    )
  } else if (command === "abandon")
    out(
      plan.sameNode
        ? `Node ${nodeName} already has ${DO_NOT_REPAIR_ANNOTATION}=true`
        : `Node ${nodeName} of the repair (uid ${record.node.uid}) no longer exists: nothing to annotate`
    )

  await call(
    kube,
    "delete repair journal",
    "DELETE",
    namespacedPath("v1", "configmaps", controllerNamespace, cmName),
    {
      apiVersion: "v1",
      kind: "DeleteOptions",
      preconditions: { uid: plan.configMap.uid, resourceVersion: plan.configMap.resourceVersion }
    }
  ).catch((e: unknown) => {
    const annotated = plan.annotate
      ? ` (Node ${nodeName} keeps the ${DO_NOT_REPAIR_ANNOTATION} annotation)`
      : ""
    if (k8sCode(e) === 409)
      throw new PluginError(
        `the journal record of ${nodeName} changed after it was read (the controller or another operator wrote it): not deleted${annotated}; run the command again: ${k8sMessage(e)}`
      )
    if (k8sCode(e) === 404)
      throw new PluginError(
        `the journal record of ${nodeName} was deleted by someone else meanwhile: nothing deleted${annotated}`
      )
    throw e
  })
  out(
    `deleted the journal record of failed repair ${record.id} (ConfigMap ${controllerNamespace}/${cmName}, resourceVersion ${plan.configMap.resourceVersion}; failure: ${record.failure ?? "none recorded"})`
  )
  if (plan.sameNode)
    out(
      hasRepairTaint(node)
        ? `kept the taint ${REPAIR_TAINT_KEY}:${REPAIR_TAINT_EFFECT} on Node ${nodeName} (the node stays cordoned)`
        : `Node ${nodeName} has no ${REPAIR_TAINT_KEY} taint (left as it is)`
    )

  const written = await recordPluginEvent(kube, out, user, {
    node: { name: nodeName, uid: record.node.uid },
    reason: EVENT_REASON[command],
    action: EVENT_ACTION[command],
    note: actionNote(command, record, user)
  })
  if (written !== undefined)
    out(
      `recorded Event ${EVENT_REASON[command]} on Node ${nodeName} (${NODE_EVENT_NAMESPACE}/${written}) as ${user ?? "an unidentified user"}`
    )

  const ns = namespaceFlag(controllerNamespace)
  if (command === "retry")
    out(
      `next: the repair controller repairs ${nodeName} afresh if it is still unhealthy and its policy allows it, within about 10 s (it rereads a failed repair's journal entry every 10 s); if the node is healthy now, remove the taint: kubectl taint node ${nodeName} ${REPAIR_TAINT_KEY}:${REPAIR_TAINT_EFFECT}-. Follow it with kubectl nodemend timeline ${nodeName}${ns}`
    )
  else if (plan.sameNode)
    out(
      `next: fix ${nodeName} by hand, then uncordon it: kubectl taint node ${nodeName} ${REPAIR_TAINT_KEY}:${REPAIR_TAINT_EFFECT}-; to let nodemend repair it again later: kubectl annotate node ${nodeName} ${DO_NOT_REPAIR_ANNOTATION}-`
    )
  return written === undefined ? 1 : 0
}

/**
 * Writes a Normal Event on a Node as the plugin (reportingInstance: the user, or this host), and returns its name;
 * a refusal is printed as a WARNING and gives undefined (what the command did stands either way).
 */
export const recordPluginEvent = (
  kube: KubeHttp,
  out: (line: string) => void,
  user: string | undefined,
  e: {
    readonly node: { readonly name: string; readonly uid?: string | undefined }
    readonly reason: string
    readonly action: string
    readonly note: string
  }
): Promise<string | undefined> => {
  const event = nodeEventBody({
    node: e.node,
    type: "Normal",
    reason: e.reason,
    action: e.action,
    note: e.note,
    reportingController: PLUGIN_REPORTING_CONTROLLER,
    reportingInstance: (user ?? hostname()).slice(0, 128) || PLUGIN_REPORTING_CONTROLLER
  })
  return call<{ metadata?: { name?: string } }>(
    kube,
    "create event",
    "POST",
    eventsPath(NODE_EVENT_NAMESPACE),
    event
  ).then(
    (r) => r.metadata?.name ?? event.metadata.name,
    (err: unknown) => {
      out(`WARNING: the Event ${e.reason} could not be written: ${k8sMessage(err)}`)
      return undefined
    }
  )
}
