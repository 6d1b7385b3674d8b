/**
 * Relapse holds (the repair controller's decide/relapse.ts): when repairs of a reason in a pool keep coming back
 * on their replacements, the controller holds new repairs of that reason in that pool and keeps the evidence in
 * its journal, one ConfigMap per pool and reason (label `nodemend.io/relapse-ledger=true`). `kubectl nodemend
 * status` lists the holds; `kubectl nodemend release <pool> <reason>` lifts one, as retry/abandon act on a failed
 * repair: every permission checked first, the ledger deleted only as it was read (uid and resourceVersion), and
 * an Event (`RepairHoldReleased`) recording who did it. The controller rereads held ledgers every 10 s: it finds
 * the ledger gone, starts it over and decides the pool's held nodes again. Decisions here are pure.
 */
import { type ConfigMap, type KubeHttp, NODE_EVENT_NAMESPACE, namespacedPath } from "@nodemend/kube-access"
import {
  evidenceText,
  ledgerConfigMapName,
  parseLedger,
  type RelapseLedger
} from "@nodemend/repair-controller"
import { Result } from "effect"
import { k8sCode, k8sMessage, PluginError } from "./errors.ts"
import {
  call,
  namespaceFlag,
  orNotFound,
  type Permission,
  recordPluginEvent,
  requirePermissions
} from "./repairActions.ts"

export const RELEASE_EVENT_REASON = "RepairHoldReleased"

/** The pool name a ledger uses for nodes without a pool label. */
export const CLUSTER_SCOPE = "<cluster>"

export interface HoldSummary {
  readonly pool: string
  readonly reason: string
  readonly since: number
  readonly relapses: number
  readonly evidence: string
  readonly configMap: string
}

/** The held ledgers among the ConfigMaps (unreadable ones skipped), oldest hold first. */
export const holdsOf = (configMaps: ReadonlyArray<ConfigMap>): HoldSummary[] =>
  configMaps
    .flatMap((cm) => {
      const r = parseLedger(cm.data?.ledger ?? "")
      if (Result.isFailure(r) || r.success.hold === undefined) return []
      const l = r.success
      const hold = l.hold!
      const relapses = l.relapses.filter((x) => x.at >= hold.since - hold.windowMs)
      return [
        {
          pool: l.pool,
          reason: l.reason,
          since: hold.since,
          relapses: relapses.length,
          evidence: evidenceText(relapses, 3),
          configMap: cm.metadata?.name ?? ""
        }
      ]
    })
    .sort((a, b) => a.since - b.since)

export const HOLD_HEADERS = ["POOL", "REASON", "HELD SINCE", "RELAPSES", "EVIDENCE"]

const fmtTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

export const holdRows = (holds: ReadonlyArray<HoldSummary>): string[][] =>
  holds.map((h) => [h.pool, h.reason, fmtTime(h.since), String(h.relapses), h.evidence.slice(0, 160)])

/** Every permission `release` uses, in the order it uses them. */
export const releasePermissions = (
  pool: string,
  reason: string,
  controllerNamespace: string
): Permission[] => {
  const ledger = {
    group: "",
    resource: "configmaps",
    namespace: controllerNamespace,
    name: ledgerConfigMapName(pool, reason)
  }
  return [
    { verb: "get", ...ledger },
    { verb: "delete", ...ledger },
    { verb: "create", group: "events.k8s.io", resource: "events", namespace: NODE_EVENT_NAMESPACE }
  ]
}

export type ReleasePlan =
  | { readonly _tag: "Refuse"; readonly message: string }
  | {
      readonly _tag: "Act"
      readonly ledger: RelapseLedger
      readonly configMap: { readonly name: string; readonly uid: string; readonly resourceVersion: string }
      /** The Node the Event is about: the latest relapsed node of the evidence. */
      readonly eventNode: { readonly name: string; readonly uid?: string }
    }

/** What `release` does with this ledger ConfigMap (undefined: not found), or why it refuses. */
export const planRelease = (
  pool: string,
  reason: string,
  controllerNamespace: string,
  configMap: ConfigMap | undefined
): ReleasePlan => {
  const name = ledgerConfigMapName(pool, reason)
  const where = `ConfigMap ${controllerNamespace}/${name}`
  if (configMap === undefined)
    return {
      _tag: "Refuse",
      message: `no relapse hold on ${reason} in ${pool === CLUSTER_SCOPE ? "the cluster scope" : `pool ${pool}`} (${where} not found): nothing to release; kubectl nodemend status lists the holds`
    }
  const parsed = parseLedger(configMap.data?.ledger ?? "")
  if (Result.isFailure(parsed))
    return {
      _tag: "Refuse",
      message: `${where} is not a relapse ledger the controller can read (${parsed.failure}); the controller ignores it: inspect it with kubectl -n ${controllerNamespace} get configmap ${name} -o yaml`
    }
  const ledger = parsed.success
  if (ledger.pool !== pool || ledger.reason !== reason)
    return {
      _tag: "Refuse",
      message: `${where} is the ledger of ${ledger.reason} in ${ledger.pool}, not of ${reason} in ${pool}; the controller ignores it, and so does release`
    }
  if (ledger.hold === undefined)
    return {
      _tag: "Refuse",
      message: `${reason} in ${pool} is not held (its ledger counts ${ledger.relapses.length} relapses, below the threshold): nothing to release`
    }
  const uid = configMap.metadata?.uid
  const resourceVersion = configMap.metadata?.resourceVersion
  if (!uid || !resourceVersion)
    return { _tag: "Refuse", message: `${where} has no uid or resourceVersion; refusing to delete it blind` }
  const last = ledger.relapses.at(-1) ?? ledger.hold.evidence.at(-1)
  return {
    _tag: "Act",
    ledger,
    configMap: { name, uid, resourceVersion },
    eventNode: { name: last?.node ?? "", ...(last?.uid !== undefined ? { uid: last.uid } : {}) }
  }
}

export const releaseNote = (ledger: RelapseLedger, user: string | undefined): string => {
  const who = user ?? "an unidentified user"
  const hold = ledger.hold
  return `${who} released the relapse hold on ${ledger.reason} in ${ledger.pool === CLUSTER_SCOPE ? "the cluster scope" : `pool ${ledger.pool}`} with kubectl nodemend release (held since ${hold === undefined ? "?" : fmtTime(hold.since)}; ${ledger.relapses.length} relapses: ${evidenceText(ledger.relapses, 3)}): its ledger was deleted and starts over; the controller repairs the pool's nodes with that reason again`.slice(
    0,
    1024
  )
}

/**
 * Runs `release` and prints each thing it did. 0 when everything was done, 1 when the ledger was deleted but the
 * Event could not be written (said so); refusals and failures before the deletion throw a PluginError.
 */
export const runRelease = async (
  kube: KubeHttp,
  pool: string,
  reason: string,
  controllerNamespace: string,
  out: (line: string) => void
): Promise<number> => {
  const user = await requirePermissions(
    kube,
    "release",
    releasePermissions(pool, reason, controllerNamespace)
  )
  const name = ledgerConfigMapName(pool, reason)
  const configMap = await orNotFound(
    call<ConfigMap>(
      kube,
      "read relapse ledger",
      "GET",
      namespacedPath("v1", "configmaps", controllerNamespace, name)
    )
  )
  const plan = planRelease(pool, reason, controllerNamespace, configMap)
  if (plan._tag === "Refuse") throw new PluginError(plan.message)
  await call(
    kube,
    "delete relapse ledger",
    "DELETE",
    namespacedPath("v1", "configmaps", controllerNamespace, name),
    {
      apiVersion: "v1",
      kind: "DeleteOptions",
      preconditions: { uid: plan.configMap.uid, resourceVersion: plan.configMap.resourceVersion }
    }
  ).catch((e: unknown) => {
    if (k8sCode(e) === 409)
      throw new PluginError(
        `the relapse ledger of ${reason} in ${pool} changed after it was read (the controller recorded another relapse): not deleted; run the command again: ${k8sMessage(e)}`
      )
    if (k8sCode(e) === 404)
      throw new PluginError(
        `the relapse ledger of ${reason} in ${pool} was deleted by someone else meanwhile`
      )
    throw e
  })
  out(
    `deleted the relapse ledger of ${reason} in ${pool} (ConfigMap ${controllerNamespace}/${name}, resourceVersion ${plan.configMap.resourceVersion}; ${plan.ledger.relapses.length} relapses recorded)`
  )
  const written = await recordPluginEvent(kube, out, user, {
    node: plan.eventNode,
    reason: RELEASE_EVENT_REASON,
    action: "Release",
    note: releaseNote(plan.ledger, user)
  })
  if (written !== undefined)
    out(
      `recorded Event ${RELEASE_EVENT_REASON} on Node ${plan.eventNode.name} (the latest relapse; ${NODE_EVENT_NAMESPACE}/${written}) as ${user ?? "an unidentified user"}`
    )
  out(
    `next: within about 10 s the controller finds the ledger gone and repairs ${pool}'s nodes with ${reason} again (its breaker and budget still apply); if they relapse again, the hold comes back after the threshold. Follow it with kubectl nodemend status${namespaceFlag(controllerNamespace)}`
  )
  return written === undefined ? 1 : 0
}
