/**
 * EC2 scheduled events per instance (what DescribeInstanceStatus reports in `eventsSet`). Real EC2 schedules them
 * itself; the fake takes them from its admin API. A completed or cancelled event stays listed, as EC2 lists it for
 * up to a week, its description starting with `[Completed]` or `[Canceled]` (API reference, InstanceStatusEvent).
 */
import { randomBytes } from "node:crypto"
import { Ec2Error } from "./Ec2Error.ts"

export const EVENT_CODES = [
  "instance-reboot",
  "system-reboot",
  "system-maintenance",
  "instance-retirement",
  "instance-stop"
] as const
export type EventCode = (typeof EVENT_CODES)[number]

/** Descriptions in the words EC2's notices use for each code. */
const DEFAULT_DESCRIPTION: Record<EventCode, string> = {
  "instance-reboot": "The instance is scheduled for a reboot",
  "system-reboot": "The instance is scheduled for a system reboot",
  "system-maintenance": "The instance is scheduled for system maintenance",
  "instance-retirement": "The instance is running on degraded hardware",
  "instance-stop": "The instance is running on degraded hardware"
}

export type EventOutcome = "completed" | "canceled"

export interface ScheduledEvent {
  readonly instanceEventId: string
  readonly code: EventCode
  readonly notBefore: Date
  readonly notAfter: Date | undefined
  readonly notBeforeDeadline: Date | undefined
  readonly baseDescription: string
  outcome: EventOutcome | undefined
}

export interface ScheduleRequest {
  readonly code: EventCode
  readonly notBefore: Date
  readonly notAfter?: Date | undefined
  readonly notBeforeDeadline?: Date | undefined
  readonly description?: string | undefined
}

const PREFIX: Record<EventOutcome, string> = { completed: "[Completed] ", canceled: "[Canceled] " }

/** The description as EC2 reports it: prefixed once the event has completed or been cancelled. */
export const descriptionOf = (e: ScheduledEvent): string =>
  (e.outcome === undefined ? "" : PREFIX[e.outcome]) + e.baseDescription

export class ScheduledEventStore {
  readonly #byInstance = new Map<string, ScheduledEvent[]>()

  schedule(instanceId: string, req: ScheduleRequest): ScheduledEvent {
    if (req.notAfter !== undefined && req.notAfter.getTime() < req.notBefore.getTime())
      throw new Ec2Error("InvalidParameterValue", "notAfter must not be before notBefore")
    const event: ScheduledEvent = {
      instanceEventId: `instance-event-${randomBytes(9).toString("hex").slice(0, 17)}`,
      code: req.code,
      notBefore: req.notBefore,
      notAfter: req.notAfter,
      notBeforeDeadline: req.notBeforeDeadline,
      baseDescription: req.description ?? DEFAULT_DESCRIPTION[req.code],
      outcome: undefined
    }
    this.#byInstance.set(instanceId, [...(this.#byInstance.get(instanceId) ?? []), event])
    return event
  }

  /** Marks an event completed or cancelled; one already ended keeps its first outcome. */
  end(instanceId: string, eventId: string, outcome: EventOutcome): ScheduledEvent {
    const event = this.#byInstance.get(instanceId)?.find((e) => e.instanceEventId === eventId)
    if (event === undefined)
      throw new Ec2Error("InvalidInstanceEventID.NotFound", `The event ID '${eventId}' does not exist`)
    event.outcome ??= outcome
    return event
  }

  of(instanceId: string): ReadonlyArray<ScheduledEvent> {
    return this.#byInstance.get(instanceId) ?? []
  }
}
