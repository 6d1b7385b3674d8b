/**
 * The EC2 actions the fake serves: RunInstances, DescribeInstances, TerminateInstances, RebootInstances,
 * DescribeInstanceStatus (DescribeInstanceStatus.ts), DescribeInstanceTypes (DescribeInstanceTypes.ts),
 * DescribeAvailabilityZones.
 */
import { Ec2Error, type FakeInstance, type InstanceStore, STATE_CODE } from "../InstanceStore.ts"
import { OWNER_ID } from "../zones.ts"
import { filters, instanceTags, listParam, type QueryParams } from "./Ec2Query.ts"
import { describeInstanceStatus } from "./DescribeInstanceStatus.ts"
import { describeInstanceTypes } from "./DescribeInstanceTypes.ts"
import { ec2Response, el, set } from "./Ec2Xml.ts"
import { MAX_FILTER_VALUES, paged, stateXml, wildcard } from "./Ec2Paging.ts"

export const EC2_API_VERSION = "2016-11-15"
export const EC2_ACTIONS = [
  "RunInstances",
  "DescribeInstances",
  "TerminateInstances",
  "RebootInstances",
  "DescribeInstanceStatus",
  "DescribeInstanceTypes"
] as const

function instanceXml(i: FakeInstance): string {
  const tags = Object.entries(i.tags).map(([k, v]) => `${el("key", k)}${el("value", v)}`)
  return [
    el("instanceId", i.instanceId),
    el("imageId", i.imageId),
    `<instanceState>${stateXml(i.state)}</instanceState>`,
    el("privateDnsName", i.privateDnsName),
    el("dnsName", ""),
    el("reason", i.stateReason ?? ""),
    el("amiLaunchIndex", 0),
    el("instanceType", i.instanceType),
    el("launchTime", i.launchTime.toISOString()),
    `<placement>${el("availabilityZone", i.zone.name)}${el("availabilityZoneId", i.zone.zoneId)}${el("tenancy", "default")}</placement>`,
    `<monitoring>${el("state", "disabled")}</monitoring>`,
    el("subnetId", i.zone.subnetId),
    el("vpcId", "vpc-0fake000000000000"),
    el("privateIpAddress", i.privateIp),
    el("architecture", "x86_64"),
    el("rootDeviceType", "ebs"),
    el("clientToken", i.clientToken ?? ""),
    set("tagSet", tags),
    el("hypervisor", "nitro"),
    ...(i.stateReason
      ? [
          `<stateReason>${el("code", i.stateReason.split(":")[0])}${el("message", i.stateReason)}</stateReason>`
        ]
      : [])
  ].join("")
}

const reservationXml = (reservationId: string, instances: ReadonlyArray<FakeInstance>) =>
  `${el("reservationId", reservationId)}${el("ownerId", OWNER_ID)}<groupSet/>${set("instancesSet", instances.map(instanceXml))}`

function matches(i: FakeInstance, name: string, values: ReadonlyArray<string>): boolean {
  const any = (v: string | undefined) =>
    v !== undefined && values.some((p) => (/[*?]/u.test(p) ? wildcard(p).test(v) : p === v))
  switch (name) {
    case "instance-state-name":
      return any(i.state)
    case "instance-state-code":
      return any(String(STATE_CODE[i.state]))
    case "instance-id":
      return any(i.instanceId)
    case "availability-zone":
      return any(i.zone.name)
    case "instance-type":
      return any(i.instanceType)
    case "subnet-id":
      return any(i.zone.subnetId)
    case "private-dns-name":
      return any(i.privateDnsName)
    case "client-token":
      return any(i.clientToken)
    default:
      if (name.startsWith("tag:")) return any(i.tags[name.slice(4)])
      if (name === "tag-key") return values.some((v) => v in i.tags)
      throw new Ec2Error("InvalidParameterValue", `The filter '${name}' is invalid`)
  }
}

function required(params: QueryParams, name: string): string {
  const v = params.get(name)
  if (v === undefined || v === "")
    throw new Ec2Error("MissingParameter", `The request must contain the parameter ${name}`)
  return v
}

function count(params: QueryParams, name: string): number {
  const raw = required(params, name)
  const n = Number(raw)
  if (!Number.isInteger(n))
    throw new Ec2Error("InvalidParameterValue", `Value (${raw}) for parameter ${name} is invalid.`)
  return n
}

/** Runs one action; returns the XML body. Throws Ec2Error for a client error. */
export function runEc2Action(
  store: InstanceStore,
  action: string,
  params: QueryParams,
  requestId: string
): string {
  switch (action) {
    case "RunInstances": {
      const min = count(params, "MinCount")
      const max = count(params, "MaxCount")
      if (min > max)
        throw new Ec2Error("InvalidParameterValue", "MinCount must be less than or equal to MaxCount")
      const ltId = params.get("LaunchTemplate.LaunchTemplateId")
      const ltName = params.get("LaunchTemplate.LaunchTemplateName")
      if (ltId !== undefined && !/^lt-[0-9a-f]{8,17}$/.test(ltId)) {
        throw new Ec2Error(
          "InvalidLaunchTemplateId.Malformed",
          `The launch template ID '${ltId}' is malformed.`
        )
      }
      const launchTemplate =
        ltId !== undefined || ltName !== undefined
          ? {
              ...(ltId !== undefined ? { id: ltId } : {}),
              ...(ltName !== undefined ? { name: ltName } : {}),
              version: params.get("LaunchTemplate.Version") ?? "$Default"
            }
          : undefined
      const { reservationId, instances } = store.run({
        count: max,
        imageId: params.get("ImageId"),
        instanceType: params.get("InstanceType"),
        subnetId: params.get("SubnetId"),
        zoneName: params.get("Placement.AvailabilityZone"),
        launchTemplate,
        clientToken: params.get("ClientToken"),
        tags: instanceTags(params)
      })
      return ec2Response("RunInstances", requestId, reservationXml(reservationId, instances))
    }
    case "DescribeInstances": {
      const ids = listParam(params, "InstanceId")
      const fs = filters(params)
      if (fs.reduce((n, f) => n + f.values.length, 0) > MAX_FILTER_VALUES)
        throw new Ec2Error(
          "FilterLimitExceeded",
          `The maximum number of filter values specified on a single call is ${MAX_FILTER_VALUES}`
        )
      const found = store.describe(ids).filter((i) => fs.every((f) => matches(i, f.name, f.values)))
      const { page, nextToken } = paged(found, params, ids.length > 0)
      const byReservation = new Map<string, FakeInstance[]>()
      for (const i of page)
        byReservation.set(i.reservationId, [...(byReservation.get(i.reservationId) ?? []), i])
      const reservations = [...byReservation].map(([r, is]) => reservationXml(r, is))
      return ec2Response(
        "DescribeInstances",
        requestId,
        set("reservationSet", reservations) + (nextToken !== undefined ? el("nextToken", nextToken) : "")
      )
    }
    case "TerminateInstances": {
      const ids = listParam(params, "InstanceId")
      if (ids.length === 0)
        throw new Ec2Error("MissingParameter", "The request must contain the parameter InstanceId")
      const changes = store.terminate(ids)
      const items = changes.map(
        (c) =>
          `${el("instanceId", c.instance.instanceId)}<currentState>${stateXml(c.current)}</currentState><previousState>${stateXml(c.previous)}</previousState>`
      )
      return ec2Response("TerminateInstances", requestId, set("instancesSet", items))
    }
    case "RebootInstances": {
      const ids = listParam(params, "InstanceId")
      if (ids.length === 0)
        throw new Ec2Error("MissingParameter", "The request must contain the parameter InstanceId")
      store.reboot(ids)
      return ec2Response("RebootInstances", requestId, el("return", "true"))
    }
    case "DescribeInstanceStatus":
      return ec2Response("DescribeInstanceStatus", requestId, describeInstanceStatus(store, params))
    case "DescribeInstanceTypes":
      return ec2Response("DescribeInstanceTypes", requestId, describeInstanceTypes(params))
    case "DescribeAvailabilityZones": {
      const items = store.zones.map(
        (z) =>
          `${el("zoneName", z.name)}${el("zoneState", "available")}${el("regionName", store.region)}${el("zoneId", z.zoneId)}${el("zoneType", "availability-zone")}${el("optInStatus", "opt-in-not-required")}<messageSet/>`
      )
      return ec2Response("DescribeAvailabilityZones", requestId, set("availabilityZoneInfo", items))
    }
    default:
      throw new Ec2Error("InvalidAction", `The action ${action} is not valid for this web service.`)
  }
}
