/**
 * The EC2 Auto Scaling actions the fake serves (AWS Query protocol, API version 2011-01-01, as
 * `@aws-sdk/client-auto-scaling` sends them: `AutoScalingGroupNames.member.1=...`, answers in `<member>` lists).
 */
import { listParam, type QueryParams } from "../ec2/Ec2Query.ts"
import { el } from "../ec2/Ec2Xml.ts"
import {
  AutoScalingError,
  type FakeGroup,
  type FakeMember,
  type GroupStore,
  lifecycleOf,
  type ScalingActivity
} from "./GroupStore.ts"

export const AUTO_SCALING_API_VERSION = "2011-01-01"
export const AUTO_SCALING_XMLNS = "http://autoscaling.amazonaws.com/doc/2011-01-01/"

/** `<name><member>..</member>...</name>` (the Query protocol's list encoding). */
const members = (name: string, items: ReadonlyArray<string>): string =>
  items.length === 0
    ? `<${name}/>`
    : `<${name}>${items.map((i) => `<member>${i}</member>`).join("")}</${name}>`

export function autoScalingResponse(action: string, requestId: string, result?: string): string {
  const body = result === undefined ? "" : `<${action}Result>${result}</${action}Result>`
  return `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${AUTO_SCALING_XMLNS}">${body}<ResponseMetadata>${el("RequestId", requestId)}</ResponseMetadata></${action}Response>`
}

export function autoScalingErrorResponse(
  code: string,
  message: string,
  requestId: string,
  type = "Sender"
): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<ErrorResponse xmlns="${AUTO_SCALING_XMLNS}"><Error>${el("Type", type)}${el("Code", code)}${el("Message", message)}</Error>${el("RequestId", requestId)}</ErrorResponse>`
}

const launchTemplateXml = (g: FakeGroup) =>
  `<LaunchTemplate>${el("LaunchTemplateId", g.launchTemplate.id)}${el("LaunchTemplateName", g.launchTemplate.name ?? g.launchTemplate.id)}${el("Version", g.launchTemplate.version)}</LaunchTemplate>`

const memberXml = (g: FakeGroup, m: FakeMember, withGroup: boolean) =>
  [
    el("InstanceId", m.instance.instanceId),
    ...(withGroup ? [el("AutoScalingGroupName", g.name)] : []),
    el("InstanceType", m.instance.instanceType),
    el("AvailabilityZone", m.instance.zone.name),
    el("LifecycleState", lifecycleOf(m)),
    el("HealthStatus", withGroup ? "HEALTHY" : "Healthy"),
    launchTemplateXml(g),
    el("ProtectedFromScaleIn", false)
  ].join("")

const groupXml = (g: FakeGroup, subnetOf: (zone: string) => string | undefined) =>
  [
    el("AutoScalingGroupName", g.name),
    el("AutoScalingGroupARN", g.arn),
    launchTemplateXml(g),
    el("MinSize", g.minSize),
    el("MaxSize", g.maxSize),
    el("DesiredCapacity", g.desiredCapacity),
    el("DefaultCooldown", 300),
    members("AvailabilityZones", g.zones.map(String)),
    members("LoadBalancerNames", []),
    members("TargetGroupARNs", []),
    el("HealthCheckType", "EC2"),
    el("HealthCheckGracePeriod", 300),
    members(
      "Instances",
      [...g.members.values()].map((m) => memberXml(g, m, false))
    ),
    el("CreatedTime", g.createdTime.toISOString()),
    members("SuspendedProcesses", []),
    el("VPCZoneIdentifier", g.zones.flatMap((z) => subnetOf(z) ?? []).join(",")),
    members(
      "Tags",
      Object.entries(g.tags).map(
        ([k, v]) =>
          `${el("ResourceId", g.name)}${el("ResourceType", "auto-scaling-group")}${el("Key", k)}${el("Value", v)}${el("PropagateAtLaunch", true)}`
      )
    ),
    el("NewInstancesProtectedFromScaleIn", false)
  ].join("")

const activityXml = (a: ScalingActivity) =>
  [
    el("ActivityId", a.activityId),
    el("AutoScalingGroupName", a.group),
    el("Description", a.description),
    el("Cause", a.cause),
    el("StartTime", a.startTime.toISOString()),
    el("EndTime", a.startTime.toISOString()),
    el("StatusCode", a.statusCode),
    ...(a.statusMessage === undefined ? [] : [el("StatusMessage", a.statusMessage)]),
    el("Progress", 100)
  ].join("")

function required(params: QueryParams, name: string): string {
  const v = params.get(name)
  if (v === undefined || v === "")
    throw new AutoScalingError(
      `1 validation error detected: Value null at '${name}' failed to satisfy constraint: Member must not be null`
    )
  return v
}

function integer(params: QueryParams, name: string): number {
  const raw = required(params, name)
  const n = Number(raw)
  if (!Number.isInteger(n))
    throw new AutoScalingError(`Invalid value '${raw}' for ${name}`, "InvalidParameterValue")
  return n
}

function bool(params: QueryParams, name: string): boolean {
  const raw = required(params, name)
  if (raw !== "true" && raw !== "false")
    throw new AutoScalingError(`Invalid value '${raw}' for ${name}`, "InvalidParameterValue")
  return raw === "true"
}

/** Runs one action; returns the XML body. Throws AutoScalingError for a client error. */
export function runAutoScalingAction(
  groups: GroupStore,
  subnetOf: (zone: string) => string | undefined,
  action: string,
  params: QueryParams,
  requestId: string
): string {
  switch (action) {
    case "DescribeAutoScalingGroups": {
      const found = groups.list(listParam(params, "AutoScalingGroupNames.member"))
      return autoScalingResponse(
        action,
        requestId,
        members(
          "AutoScalingGroups",
          found.map((g) => groupXml(g, subnetOf))
        )
      )
    }
    case "DescribeAutoScalingInstances": {
      const ids = listParam(params, "InstanceIds.member")
      const found = (ids.length === 0 ? groups.list().flatMap((g) => [...g.members.keys()]) : ids).flatMap(
        (id) => {
          const m = groups.memberOf(id)
          return m ? [memberXml(m.group, m.member, true)] : []
        }
      )
      return autoScalingResponse(action, requestId, members("AutoScalingInstances", found))
    }
    case "SetDesiredCapacity": {
      groups.setDesiredCapacity(required(params, "AutoScalingGroupName"), integer(params, "DesiredCapacity"))
      return autoScalingResponse(action, requestId)
    }
    case "TerminateInstanceInAutoScalingGroup": {
      const activity = groups.terminateInstance(
        required(params, "InstanceId"),
        bool(params, "ShouldDecrementDesiredCapacity")
      )
      return autoScalingResponse(action, requestId, `<Activity>${activityXml(activity)}</Activity>`)
    }
    case "DescribeScalingActivities": {
      const name = params.get("AutoScalingGroupName")
      const max = Number(params.get("MaxRecords") ?? "100")
      const found = groups.activities(name).slice(0, Number.isInteger(max) && max > 0 ? max : 100)
      return autoScalingResponse(action, requestId, members("Activities", found.map(activityXml)))
    }
    default:
      throw new AutoScalingError(
        `Could not find operation ${action} for version ${AUTO_SCALING_API_VERSION}`,
        "InvalidAction"
      )
  }
}
