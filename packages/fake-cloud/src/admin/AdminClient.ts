/** A client for the fake's admin API; the CLI and tests use it. */
import type { FaultSpec } from "../Faults.ts"
import type { AdminGroup, AutoScalingGroupRequest } from "./AutoScalingAdmin.ts"

export type { AdminGroup, AutoScalingGroupRequest } from "./AutoScalingAdmin.ts"

export interface AdminInstance {
  readonly instanceId: string
  readonly state: string
  readonly instanceType: string
  readonly zone: string
  readonly zoneId: string
  readonly subnetId: string
  readonly nodeName: string
  readonly providerID: string
  readonly tags: Record<string, string>
  readonly bootId: string
}

/** An EC2 scheduled event as the admin API reports it (`description` prefixed once it has ended, as EC2's). */
export interface AdminScheduledEvent {
  readonly instanceEventId: string
  readonly code: string
  readonly description: string
  readonly notBefore: string
  readonly notAfter?: string
  readonly outcome?: "completed" | "canceled"
}

export interface AdminStats {
  /** Instances launched by anyone; `launchesBy` splits them into RunInstances calls and Auto Scaling groups. */
  readonly launches: number
  readonly launchesBy: { readonly runInstances: number; readonly autoScaling: number }
  readonly terminationsStarted: Record<string, number>
  readonly reboots: Record<string, number>
  readonly calls: Record<string, number>
}

export class AdminClient {
  readonly #base: string
  constructor(baseUrl: string) {
    this.#base = baseUrl.replace(/\/+$/, "")
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.#base}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status}: ${text}`)
    return JSON.parse(text) as T
  }

  instances = () =>
    this.#call<{ instances: AdminInstance[] }>("GET", "/admin/instances").then((r) => r.instances)
  stats = () => this.#call<AdminStats>("GET", "/admin/stats")
  adopt = (req: {
    nodeName: string
    instanceId?: string
    instanceType?: string
    zone?: string
    tags?: Record<string, string>
    launchTemplateId?: string
  }) => this.#call<AdminInstance>("POST", "/admin/instances/adopt", req)
  autoScalingGroups = () =>
    this.#call<{ groups: AdminGroup[] }>("GET", "/admin/autoscaling-groups").then((r) => r.groups)
  autoScalingGroup = async (name: string) => {
    const g = (await this.autoScalingGroups()).find((g) => g.name === name)
    if (!g) throw new Error(`no Auto Scaling group ${name}`)
    return g
  }
  createAutoScalingGroup = (req: AutoScalingGroupRequest) =>
    this.#call<AdminGroup>("POST", "/admin/autoscaling-groups", req)
  /** Every launch of the group fails with `message` until called again without one. */
  setLaunchFailure = (group: string, message?: string) =>
    this.#call<AdminGroup>(
      "POST",
      `/admin/autoscaling-groups/${encodeURIComponent(group)}/launch-failure`,
      message === undefined ? {} : { message }
    )
  /**
   * Instances launched from `templateId` from now on report `fault` on their Node once Ready, or (`missingGpus`)
   * come up with that many GPUs fewer than their type has.
   */
  breakLaunchTemplate = (
    templateId: string,
    fault: { type: string; status: string; reason: string; message: string } | { missingGpus: number }
  ) => this.#call<unknown>("PUT", `/admin/launch-templates/${encodeURIComponent(templateId)}/broken`, fault)
  mendLaunchTemplate = (templateId: string) =>
    this.#call<unknown>("DELETE", `/admin/launch-templates/${encodeURIComponent(templateId)}/broken`)
  /** Schedules an EC2 event on an instance: `notBefore` (ISO) or `notBeforeInMinutes` from now. */
  scheduleEvent = (
    instanceId: string,
    req: {
      code: string
      notBefore?: string
      notBeforeInMinutes?: number
      windowMinutes?: number
      notAfter?: string
      description?: string
    }
  ) =>
    this.#call<AdminScheduledEvent>("POST", `/admin/instances/${encodeURIComponent(instanceId)}/events`, req)
  /** Completes or cancels a scheduled event; it stays listed with `[Completed]` or `[Canceled]`, as on EC2. */
  endEvent = (instanceId: string, eventId: string, outcome: "completed" | "canceled") =>
    this.#call<AdminScheduledEvent>(
      "POST",
      `/admin/instances/${encodeURIComponent(instanceId)}/events/${encodeURIComponent(eventId)}/end`,
      { outcome }
    )
  scheduledEvents = (instanceId: string) =>
    this.#call<{ events: AdminScheduledEvent[] }>(
      "GET",
      `/admin/instances/${encodeURIComponent(instanceId)}/events`
    ).then((r) => r.events)
  injectFault = (spec: FaultSpec) => this.#call<unknown>("POST", "/admin/faults", spec)
  clearFaults = () => this.#call<unknown>("DELETE", "/admin/faults")
  startZonalShift = (req: {
    awayFrom: string
    resourceIdentifier?: string
    expiresInMinutes?: number
    comment?: string
    practiceRun?: boolean
  }) =>
    this.#call<{ zonalShiftId: string; awayFrom: string; status: string }>("POST", "/admin/zonal-shifts", req)
  cancelZonalShift = (id: string) =>
    this.#call<unknown>("DELETE", `/admin/zonal-shifts/${encodeURIComponent(id)}`)
  cancelAllZonalShifts = () => this.#call<{ canceled: number }>("DELETE", "/admin/zonal-shifts")
  startAutoshift = (awayFrom: string) => this.#call<unknown>("POST", "/admin/autoshifts", { awayFrom })
  endAutoshift = (awayFrom: string) =>
    this.#call<{ ended: number }>("DELETE", `/admin/autoshifts/${encodeURIComponent(awayFrom)}`)
}
