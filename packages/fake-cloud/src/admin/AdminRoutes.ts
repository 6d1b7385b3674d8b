/**
 * The fake's own control API (JSON, unauthenticated, loopback only): shifts, faults, adoption, Auto Scaling
 * groups, stats.
 */
import { Schema } from "effect"
import { ArcError, type ZonalShiftStore } from "../arc/ZonalShiftStore.ts"
import type { GroupStore } from "../autoscaling/GroupStore.ts"
import { AutoScalingGroupRequest, groupJson, LaunchFailureRequest, toGroupSpec } from "./AutoScalingAdmin.ts"
import { FaultSpec, type Faults } from "../Faults.ts"
import type { FakeInstance, InstanceStore } from "../InstanceStore.ts"
import { AdminError, type AdminReply, decode } from "./AdminReply.ts"
import { routeScheduledEvents } from "./ScheduledEventsAdmin.ts"

export { AdminError, type AdminReply, decode }

export const StartShiftRequest = Schema.Struct({
  /** Zone name or zone id. */
  awayFrom: Schema.String,
  /** Defaults to the server's `--cluster-arn`. */
  resourceIdentifier: Schema.optionalKey(Schema.String),
  expiresInMinutes: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThan(0))),
  comment: Schema.optionalKey(Schema.String),
  practiceRun: Schema.optionalKey(Schema.Boolean)
})

export const AutoshiftRequest = Schema.Struct({ awayFrom: Schema.String })

export const AdoptRequest = Schema.Struct({
  nodeName: Schema.String,
  instanceId: Schema.optionalKey(Schema.String),
  instanceType: Schema.optionalKey(Schema.String),
  zone: Schema.optionalKey(Schema.String),
  tags: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  /** The launch template the instance counts as launched from (tags `aws:ec2launchtemplate:*`). */
  launchTemplateId: Schema.optionalKey(Schema.String)
})

export interface AdminContext {
  readonly store: InstanceStore
  readonly shifts: ZonalShiftStore
  readonly groups: GroupStore
  readonly faults: Faults
  readonly calls: Record<string, number>
  readonly defaultResourceArn: string | undefined
}

export const instanceJson = (i: FakeInstance) => ({
  instanceId: i.instanceId,
  state: i.state,
  instanceType: i.instanceType,
  zone: i.zone.name,
  zoneId: i.zone.zoneId,
  subnetId: i.zone.subnetId,
  nodeName: i.nodeName,
  providerID: `aws:///${i.zone.name}/${i.instanceId}`,
  privateDnsName: i.privateDnsName,
  tags: i.tags,
  bootId: i.bootId,
  launchTemplate: i.launchTemplate
})

/**
 * What instances of a broken launch template come up with (InstanceStore.markTemplateBroken): a condition they
 * report, or GPUs they lack.
 */
const NodeFaultRequest = Schema.Union([
  Schema.Struct({
    type: Schema.String,
    status: Schema.String,
    reason: Schema.String,
    message: Schema.String
  }),
  Schema.Struct({ missingGpus: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)) })
])

export async function routeAdmin(
  ctx: AdminContext,
  method: string,
  path: string,
  body: string
): Promise<AdminReply | undefined> {
  const { store, shifts, faults, groups } = ctx
  if (path === "/admin/instances" && method === "GET") {
    return { status: 200, body: { instances: store.describe([]).map(instanceJson) } }
  }
  if (path === "/admin/instances/adopt" && method === "POST") {
    const req = decode(AdoptRequest, body)
    const i = await store.adopt({
      nodeName: req.nodeName,
      instanceId: req.instanceId,
      instanceType: req.instanceType,
      zoneName: req.zone,
      tags: req.tags,
      launchTemplate:
        req.launchTemplateId !== undefined ? { id: req.launchTemplateId, version: "$Default" } : undefined
    })
    return { status: 200, body: instanceJson(i) }
  }
  const events = routeScheduledEvents(store, method, path, body)
  if (events !== undefined) return events
  if (path === "/admin/stats" && method === "GET") {
    return { status: 200, body: { ...store.stats(), calls: { ...ctx.calls } } }
  }
  if (path === "/admin/autoscaling-groups" && method === "GET") {
    return { status: 200, body: { groups: groups.list().map(groupJson) } }
  }
  if (path === "/admin/autoscaling-groups" && method === "POST") {
    return { status: 200, body: groupJson(groups.create(toGroupSpec(decode(AutoScalingGroupRequest, body)))) }
  }
  const failure = /^\/admin\/autoscaling-groups\/([^/]+)\/launch-failure$/.exec(path)
  if (failure && method === "POST") {
    const { message } = decode(LaunchFailureRequest, body)
    return { status: 200, body: groupJson(groups.setLaunchFailure(decodeURIComponent(failure[1]!), message)) }
  }
  const template = /^\/admin\/launch-templates\/([^/]+)\/broken$/.exec(path)
  if (template && method === "PUT") {
    const id = decodeURIComponent(template[1]!)
    store.markTemplateBroken(id, decode(NodeFaultRequest, body))
    return { status: 200, body: { broken: store.brokenTemplates() } }
  }
  if (template && method === "DELETE") {
    store.markTemplateBroken(decodeURIComponent(template[1]!), undefined)
    return { status: 200, body: { broken: store.brokenTemplates() } }
  }
  if (path === "/admin/zones" && method === "GET") {
    return { status: 200, body: { region: store.region, zones: store.zones } }
  }
  if (path === "/admin/faults" && method === "POST") {
    const f = faults.add(decode(FaultSpec, body))
    return { status: 200, body: { fault: f.spec, remaining: f.remaining } }
  }
  if (path === "/admin/faults" && method === "GET") {
    return { status: 200, body: { faults: faults.list() } }
  }
  if (path === "/admin/faults" && method === "DELETE") {
    faults.clear()
    return { status: 200, body: { cleared: true } }
  }
  if (path === "/admin/zonal-shifts" && method === "GET") {
    return {
      status: 200,
      body: {
        zonalShifts: shifts.all().map((s) => ({ ...s, status: shifts.status(s) })),
        autoshifts: shifts.autoshifts()
      }
    }
  }
  if (path === "/admin/zonal-shifts" && method === "POST") {
    const req = decode(StartShiftRequest, body)
    const resourceIdentifier = req.resourceIdentifier ?? ctx.defaultResourceArn
    if (!resourceIdentifier)
      throw new AdminError("resourceIdentifier is required (the server has no --cluster-arn)")
    const s = shifts.start({
      resourceIdentifier,
      awayFrom: req.awayFrom,
      expiresInMs: (req.expiresInMinutes ?? 60) * 60_000,
      ...(req.comment === undefined ? {} : { comment: req.comment }),
      ...(req.practiceRun === undefined ? {} : { practiceRun: req.practiceRun })
    })
    return { status: 200, body: { ...s, status: shifts.status(s) } }
  }
  if (path === "/admin/zonal-shifts" && method === "DELETE") {
    return { status: 200, body: { canceled: shifts.cancelAll() } }
  }
  const one = /^\/admin\/zonal-shifts\/([^/]+)$/.exec(path)
  if (one && method === "DELETE") {
    const s = shifts.cancel(decodeURIComponent(one[1]!))
    return { status: 200, body: { ...s, status: shifts.status(s) } }
  }
  if (path === "/admin/autoshifts" && method === "POST") {
    return { status: 200, body: shifts.startAutoshift(decode(AutoshiftRequest, body).awayFrom) }
  }
  const auto = /^\/admin\/autoshifts\/([^/]+)$/.exec(path)
  if (auto && method === "DELETE") {
    return { status: 200, body: { ended: shifts.endAutoshift(decodeURIComponent(auto[1]!)) } }
  }
  return undefined
}

export { ArcError }
