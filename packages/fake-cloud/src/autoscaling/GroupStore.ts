/**
 * The fake's EC2 Auto Scaling groups: each keeps `desiredCapacity` members running from its launch template, as
 * the real service does. A reconciler (after every change, and on a timer for instances that die under it)
 * launches members through the instance store — tagged `aws:autoscaling:groupName`, so they are kwok Nodes like any
 * instance — and terminates the surplus. A member terminated through EC2 is replaced, like a failed health check.
 */
import { randomUUID } from "node:crypto"
import { Ec2Error, type FakeInstance, type InstanceStore, type LaunchTemplateRef } from "../InstanceStore.ts"
import { OWNER_ID } from "../zones.ts"

export const ASG_NAME_TAG = "aws:autoscaling:groupName"

export type LifecycleState = "Pending" | "InService" | "Terminating"

export interface GroupSpec {
  readonly name: string
  readonly launchTemplate: LaunchTemplateRef
  readonly instanceType?: string | undefined
  /** Zone names; default: every zone of the region. */
  readonly zones?: ReadonlyArray<string> | undefined
  readonly minSize: number
  readonly maxSize: number
  readonly desiredCapacity: number
  /** Tags propagated to the members at launch (e.g. the pool label). */
  readonly tags?: Readonly<Record<string, string>> | undefined
}

export interface ScalingActivity {
  readonly activityId: string
  readonly group: string
  readonly description: string
  readonly cause: string
  readonly startTime: Date
  readonly statusCode: "Successful" | "Failed"
  readonly statusMessage?: string
}

export interface FakeMember {
  readonly instance: FakeInstance
  /** Terminated through the group (TerminateInstanceInAutoScalingGroup or scale-in). */
  terminating: boolean
}

export interface FakeGroup {
  readonly name: string
  readonly arn: string
  readonly launchTemplate: LaunchTemplateRef
  readonly instanceType: string
  readonly zones: ReadonlyArray<string>
  readonly tags: Readonly<Record<string, string>>
  readonly createdTime: Date
  minSize: number
  maxSize: number
  desiredCapacity: number
  readonly members: Map<string, FakeMember>
  /** While set, every launch fails with this message (a capacity shortage), recorded as a Failed activity. */
  launchFailure: string | undefined
  /** The desired capacity a failed launch was last recorded for (one Failed activity per change of it). */
  failedFor: number | undefined
}

/** An Auto Scaling client error: HTTP 400 `ValidationError` unless said otherwise. */
export class AutoScalingError extends Error {
  readonly code: string
  readonly status: number
  constructor(message: string, code = "ValidationError", status = 400) {
    super(message)
    this.code = code
    this.status = status
  }
}

const NAME = /^[\w\-.@ ]{1,255}$/u
const LIVE = new Set(["pending", "running"])

export const lifecycleOf = (m: FakeMember): LifecycleState =>
  m.terminating || !LIVE.has(m.instance.state)
    ? "Terminating"
    : m.instance.state === "pending"
      ? "Pending"
      : "InService"

export class GroupStore {
  readonly #store: InstanceStore
  readonly #groups = new Map<string, FakeGroup>()
  readonly #activities: ScalingActivity[] = []
  readonly #timer: NodeJS.Timeout
  readonly #log: (msg: string) => void

  constructor(store: InstanceStore, options: { reconcileMs?: number; log?: (msg: string) => void } = {}) {
    this.#store = store
    this.#log = options.log ?? (() => {})
    this.#timer = setInterval(() => this.reconcileAll(), options.reconcileMs ?? 500)
    this.#timer.unref()
  }

  create(spec: GroupSpec): FakeGroup {
    if (!NAME.test(spec.name)) throw new AutoScalingError(`Invalid Auto Scaling group name: ${spec.name}`)
    if (this.#groups.has(spec.name)) {
      throw new AutoScalingError(
        `AutoScalingGroup by this name already exists - A group with the name ${spec.name} already exists`,
        "AlreadyExists"
      )
    }
    const { minSize, maxSize, desiredCapacity } = spec
    if (!(0 <= minSize && minSize <= desiredCapacity && desiredCapacity <= maxSize)) {
      throw new AutoScalingError(
        `Desired capacity:${desiredCapacity} must be between the specified min size:${minSize} and max size:${maxSize}`
      )
    }
    const zones = spec.zones ?? this.#store.zones.map((z) => z.name)
    for (const z of zones) {
      if (!this.#store.zoneByName(z)) throw new AutoScalingError(`Invalid Availability Zone: ${z}`)
    }
    if (zones.length === 0)
      throw new AutoScalingError("At least one Availability Zone or VPC Subnet is required.")
    const group: FakeGroup = {
      name: spec.name,
      arn: `arn:aws:autoscaling:${this.#store.region}:${OWNER_ID}:autoScalingGroup:${randomUUID()}:autoScalingGroupName/${spec.name}`,
      launchTemplate: spec.launchTemplate,
      instanceType: spec.instanceType ?? "m5.large",
      zones,
      tags: { ...spec.tags },
      createdTime: new Date(),
      minSize,
      maxSize,
      desiredCapacity,
      members: new Map(),
      launchFailure: undefined,
      failedFor: undefined
    }
    this.#groups.set(spec.name, group)
    this.reconcile(group)
    return group
  }

  /** The named groups (unknown names are left out, as AWS does); none named: all of them. */
  list(names: ReadonlyArray<string> = []): FakeGroup[] {
    if (names.length === 0) return [...this.#groups.values()]
    return names.flatMap((n) => this.#groups.get(n) ?? [])
  }

  get(name: string): FakeGroup {
    const g = this.#groups.get(name)
    if (!g)
      throw new AutoScalingError(`AutoScalingGroup name not found - AutoScalingGroup '${name}' not found`)
    return g
  }

  /** The group `instanceId` is a member of, with its membership; none when it is in no group. */
  memberOf(instanceId: string): { group: FakeGroup; member: FakeMember } | undefined {
    for (const group of this.#groups.values()) {
      const member = group.members.get(instanceId)
      if (member) return { group, member }
    }
    return undefined
  }

  /** SetDesiredCapacity: within [MinSize, MaxSize] or a ValidationError, as AWS answers. */
  setDesiredCapacity(name: string, desired: number): void {
    const g = this.get(name)
    if (desired > g.maxSize) {
      throw new AutoScalingError(
        `New SetDesiredCapacity value ${desired} is above max value ${g.maxSize} for the AutoScalingGroup.`
      )
    }
    if (desired < g.minSize) {
      throw new AutoScalingError(
        `New SetDesiredCapacity value ${desired} is below min value ${g.minSize} for the AutoScalingGroup.`
      )
    }
    g.desiredCapacity = desired
    this.reconcile(g)
  }

  /** TerminateInstanceInAutoScalingGroup. A member already terminating is answered with no second effect. */
  terminateInstance(instanceId: string, decrement: boolean): ScalingActivity {
    const found = this.memberOf(instanceId)
    if (!found) {
      throw new AutoScalingError(
        `Instance Id not found - No managed instance found for instance ID: ${instanceId}`
      )
    }
    const { group, member } = found
    const cause = `At ${new Date().toISOString()} instance ${instanceId} was taken out of service in response to a user request${decrement ? `, shrinking the capacity from ${group.desiredCapacity} to ${group.desiredCapacity - 1}` : ""}.`
    if (lifecycleOf(member) === "Terminating")
      return this.#record(group, `Terminating EC2 instance: ${instanceId}`, cause)
    if (decrement) {
      if (group.desiredCapacity <= group.minSize) {
        throw new AutoScalingError(
          `Currently, desiredSize equals minSize (${group.minSize}). Terminating instance without replacement will violate group's min size constraint. Either set shouldDecrementDesiredCapacity flag to false or lower group's min size.`
        )
      }
      group.desiredCapacity--
    }
    member.terminating = true
    this.#store.terminate([instanceId])
    const activity = this.#record(group, `Terminating EC2 instance: ${instanceId}`, cause)
    this.reconcile(group)
    return activity
  }

  /** Every launch of the group fails with `message` until it is cleared (undefined). */
  setLaunchFailure(name: string, message: string | undefined): FakeGroup {
    const g = this.get(name)
    g.launchFailure = message
    g.failedFor = undefined
    this.reconcile(g)
    return g
  }

  /** Newest first, as DescribeScalingActivities answers. */
  activities(group?: string): ScalingActivity[] {
    return this.#activities.filter((a) => group === undefined || a.group === group).reverse()
  }

  reconcileAll(): void {
    for (const g of this.#groups.values()) this.reconcile(g)
  }

  close(): void {
    clearInterval(this.#timer)
  }

  /** Members gone from EC2 leave the group; then launch or terminate until the live count is the desired one. */
  reconcile(group: FakeGroup): void {
    for (const [id, m] of group.members) if (m.instance.state === "terminated") group.members.delete(id)
    const live = () => [...group.members.values()].filter((m) => lifecycleOf(m) !== "Terminating")
    while (live().length < group.desiredCapacity) {
      if (group.launchFailure !== undefined) {
        if (group.failedFor !== group.desiredCapacity) {
          group.failedFor = group.desiredCapacity
          this.#record(
            group,
            "Launching a new EC2 instance.  Status Reason: " + group.launchFailure,
            this.#launchCause(group, live().length),
            group.launchFailure
          )
        }
        return
      }
      this.#launch(group, live())
    }
    const surplus = live().length - group.desiredCapacity
    if (surplus > 0) {
      for (const m of this.#scaleInOrder(live()).slice(0, surplus)) {
        m.terminating = true
        this.#store.terminate([m.instance.instanceId])
        this.#record(
          group,
          `Terminating EC2 instance: ${m.instance.instanceId}`,
          `At ${new Date().toISOString()} an instance was taken out of service in response to a difference between desired and actual capacity, shrinking the capacity from ${live().length + 1} to ${live().length}.`
        )
      }
    }
  }

  #launchCause(group: FakeGroup, live: number): string {
    return `At ${new Date().toISOString()} an instance was started in response to a difference between desired and actual capacity, increasing the capacity from ${live} to ${group.desiredCapacity}.`
  }

  /** One member in the group's zone with the fewest live members (AWS balances zones). */
  #launch(group: FakeGroup, live: ReadonlyArray<FakeMember>): void {
    const count = (z: string) => live.filter((m) => m.instance.zone.name === z).length
    const zoneName = [...group.zones].sort((a, b) => count(a) - count(b))[0]!
    const zone = this.#store.zoneByName(zoneName)!
    const cause = this.#launchCause(group, live.length)
    try {
      const { instances } = this.#store.run({
        count: 1,
        instanceType: group.instanceType,
        subnetId: zone.subnetId,
        launchTemplate: group.launchTemplate,
        tags: { ...group.tags, [ASG_NAME_TAG]: group.name },
        launchedBy: "autoScaling"
      })
      const instance = instances[0]!
      group.members.set(instance.instanceId, { instance, terminating: false })
      this.#record(group, `Launching a new EC2 instance: ${instance.instanceId}`, cause)
      this.#log(`auto scaling group ${group.name}: launched ${instance.instanceId} in ${zoneName}`)
    } catch (e) {
      if (!(e instanceof Ec2Error)) throw e
      group.launchFailure = e.message
    }
  }

  /** AWS's default termination policy, simplified: the zone with the most members first, then the oldest. */
  #scaleInOrder(live: ReadonlyArray<FakeMember>): FakeMember[] {
    const count = (z: string) => live.filter((m) => m.instance.zone.name === z).length
    return [...live].sort(
      (a, b) =>
        count(b.instance.zone.name) - count(a.instance.zone.name) ||
        a.instance.launchTime.getTime() - b.instance.launchTime.getTime()
    )
  }

  #record(group: FakeGroup, description: string, cause: string, failure?: string): ScalingActivity {
    const activity: ScalingActivity = {
      activityId: randomUUID(),
      group: group.name,
      description,
      cause,
      startTime: new Date(),
      statusCode: failure === undefined ? "Successful" : "Failed",
      ...(failure === undefined ? {} : { statusMessage: failure })
    }
    this.#activities.push(activity)
    return activity
  }
}
