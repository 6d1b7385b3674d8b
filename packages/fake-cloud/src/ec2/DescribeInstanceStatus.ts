/**
 * DescribeInstanceStatus as EC2 answers it: running instances only unless `IncludeAllInstances=true`; at most 100
 * `InstanceId`s, every one known (else the whole call fails); `MaxResults`/`NextToken` pages (not with ids);
 * filters on the instance and on its scheduled events (an instance matches when any of its events does, and is
 * then listed with all of them). Status checks always pass: the fake has no impaired hardware.
 */
import { Ec2Error, type FakeInstance, type InstanceStore, STATE_CODE } from "../InstanceStore.ts"
import { MAX_FILTER_VALUES, paged, stateXml, wildcard } from "./Ec2Paging.ts"
import { filters, listParam, type QueryParams } from "./Ec2Query.ts"
import { el, set } from "./Ec2Xml.ts"
import { descriptionOf, type ScheduledEvent } from "./ScheduledEvents.ts"

/** EC2's limit on explicitly named instances in one DescribeInstanceStatus call. */
export const MAX_STATUS_IDS = 100

const matchAny = (values: ReadonlyArray<string>) => (v: string | undefined) =>
  v !== undefined && values.some((p) => (/[*?]/u.test(p) ? wildcard(p).test(v) : p === v))

const iso = (d: Date | undefined) => d?.toISOString()

const EVENT_FIELDS: Record<string, (e: ScheduledEvent) => string | undefined> = {
  "event.code": (e) => e.code,
  "event.description": descriptionOf,
  "event.instance-event-id": (e) => e.instanceEventId,
  "event.not-before": (e) => iso(e.notBefore),
  "event.not-after": (e) => iso(e.notAfter),
  "event.not-before-deadline": (e) => iso(e.notBeforeDeadline)
}

function matches(store: InstanceStore, i: FakeInstance, name: string, values: ReadonlyArray<string>) {
  const any = matchAny(values)
  const eventField = EVENT_FIELDS[name]
  if (eventField !== undefined) return store.events.of(i.instanceId).some((e) => any(eventField(e)))
  switch (name) {
    case "availability-zone":
      return any(i.zone.name)
    case "instance-state-name":
      return any(i.state)
    case "instance-state-code":
      return any(String(STATE_CODE[i.state]))
    case "system-status.status":
    case "instance-status.status":
      return any(i.state === "running" ? "ok" : "not-applicable")
    default:
      throw new Ec2Error("InvalidParameterValue", `The filter '${name}' is invalid`)
  }
}

const eventXml = (e: ScheduledEvent) =>
  [
    el("instanceEventId", e.instanceEventId),
    el("code", e.code),
    el("description", descriptionOf(e)),
    el("notBefore", iso(e.notBefore)),
    ...(e.notAfter !== undefined ? [el("notAfter", iso(e.notAfter))] : []),
    ...(e.notBeforeDeadline !== undefined ? [el("notBeforeDeadline", iso(e.notBeforeDeadline))] : [])
  ].join("")

const checkXml = (running: boolean) =>
  running
    ? `${el("status", "ok")}${set("details", [`${el("name", "reachability")}${el("status", "passed")}`])}`
    : `${el("status", "not-applicable")}<details/>`

const statusXml = (store: InstanceStore, i: FakeInstance) =>
  [
    el("instanceId", i.instanceId),
    el("availabilityZone", i.zone.name),
    el("availabilityZoneId", i.zone.zoneId),
    set("eventsSet", store.events.of(i.instanceId).map(eventXml)),
    `<instanceState>${stateXml(i.state)}</instanceState>`,
    `<systemStatus>${checkXml(i.state === "running")}</systemStatus>`,
    `<instanceStatus>${checkXml(i.state === "running")}</instanceStatus>`
  ].join("")

/** The inner XML of the answer: `instanceStatusSet` and, when there is a next page, `nextToken`. */
export function describeInstanceStatus(store: InstanceStore, params: QueryParams): string {
  const ids = listParam(params, "InstanceId")
  if (ids.length > MAX_STATUS_IDS)
    throw new Ec2Error(
      "InvalidParameterValue",
      `The maximum number of instance IDs that can be specified is ${MAX_STATUS_IDS}`
    )
  const fs = filters(params)
  if (fs.reduce((n, f) => n + f.values.length, 0) > MAX_FILTER_VALUES)
    throw new Ec2Error(
      "FilterLimitExceeded",
      `The maximum number of filter values specified on a single call is ${MAX_FILTER_VALUES}`
    )
  const all = params.get("IncludeAllInstances") === "true"
  const found = store
    .describe(ids)
    .filter((i) => all || i.state === "running")
    .filter((i) => fs.every((f) => matches(store, i, f.name, f.values)))
  const { page, nextToken } = paged(found, params, ids.length > 0)
  return (
    set(
      "instanceStatusSet",
      page.map((i) => statusXml(store, i))
    ) + (nextToken !== undefined ? el("nextToken", nextToken) : "")
  )
}
