/**
 * Admin routes for EC2 scheduled events: `POST /admin/instances/<id>/events` schedules one (as EC2 would),
 * `POST /admin/instances/<id>/events/<eventId>/end` completes or cancels it, `GET /admin/instances/<id>/events`
 * lists them as DescribeInstanceStatus would.
 */
import { Schema } from "effect"
import type { InstanceStore } from "../InstanceStore.ts"
import { descriptionOf, EVENT_CODES, type ScheduledEvent } from "../ec2/ScheduledEvents.ts"
import { AdminError, type AdminReply, decode } from "./AdminReply.ts"

const IsoTime = Schema.String.check(
  Schema.makeFilter((s) => !Number.isNaN(Date.parse(s)) || `not an ISO time: ${s}`)
)

export const ScheduleEventRequest = Schema.Struct({
  code: Schema.Literals(EVENT_CODES),
  /** When EC2 will act at the earliest: an ISO time, or minutes from now (one of the two). */
  notBefore: Schema.optionalKey(IsoTime),
  notBeforeInMinutes: Schema.optionalKey(Schema.Finite),
  /** The window's length (default 2 h, as EC2's retirement windows run); or `notAfter`. */
  windowMinutes: Schema.optionalKey(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))),
  notAfter: Schema.optionalKey(IsoTime),
  description: Schema.optionalKey(Schema.String)
})

export const EndEventRequest = Schema.Struct({ outcome: Schema.Literals(["completed", "canceled"]) })

export const eventJson = (e: ScheduledEvent) => ({
  instanceEventId: e.instanceEventId,
  code: e.code,
  description: descriptionOf(e),
  notBefore: e.notBefore.toISOString(),
  ...(e.notAfter !== undefined ? { notAfter: e.notAfter.toISOString() } : {}),
  ...(e.outcome !== undefined ? { outcome: e.outcome } : {})
})

const DEFAULT_WINDOW_MINUTES = 120

const notBeforeOf = (req: typeof ScheduleEventRequest.Type): Date => {
  if ((req.notBefore === undefined) === (req.notBeforeInMinutes === undefined))
    throw new AdminError("give exactly one of notBefore and notBeforeInMinutes")
  return req.notBefore !== undefined
    ? new Date(req.notBefore)
    : new Date(Date.now() + (req.notBeforeInMinutes ?? 0) * 60_000)
}

/** Answers an events route, or undefined for any other path. */
export function routeScheduledEvents(
  store: InstanceStore,
  method: string,
  path: string,
  body: string
): AdminReply | undefined {
  const list = /^\/admin\/instances\/(i-[0-9a-f]+)\/events$/.exec(path)
  const end = /^\/admin\/instances\/(i-[0-9a-f]+)\/events\/([^/]+)\/end$/.exec(path)
  const instanceId = list?.[1] ?? end?.[1]
  if (instanceId === undefined) return undefined
  if (store.describe([]).every((i) => i.instanceId !== instanceId))
    throw new AdminError(`no instance ${instanceId}`, 404)
  if (list && method === "GET")
    return { status: 200, body: { events: store.events.of(instanceId).map(eventJson) } }
  if (list && method === "POST") {
    const req = decode(ScheduleEventRequest, body)
    const notBefore = notBeforeOf(req)
    const notAfter =
      req.notAfter !== undefined
        ? new Date(req.notAfter)
        : new Date(notBefore.getTime() + (req.windowMinutes ?? DEFAULT_WINDOW_MINUTES) * 60_000)
    const e = store.events.schedule(instanceId, {
      code: req.code,
      notBefore,
      notAfter,
      description: req.description
    })
    return { status: 200, body: eventJson(e) }
  }
  if (end && method === "POST") {
    const { outcome } = decode(EndEventRequest, body)
    return {
      status: 200,
      body: eventJson(store.events.end(instanceId, decodeURIComponent(end[2]!), outcome))
    }
  }
  return undefined
}
