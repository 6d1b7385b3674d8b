/** The admin API's Auto Scaling groups: the request that creates one, and a group as the admin API shows it. */
import { Schema } from "effect"
import { type FakeGroup, type GroupSpec, lifecycleOf } from "../autoscaling/GroupStore.ts"

const Size = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

export const AutoScalingGroupRequest = Schema.Struct({
  name: Schema.String,
  launchTemplateId: Schema.String.check(Schema.isPattern(/^lt-[0-9a-f]{8,17}$/)),
  launchTemplateVersion: Schema.optionalKey(Schema.String),
  instanceType: Schema.optionalKey(Schema.String),
  /** Zone names; default: every zone of the region. */
  zones: Schema.optionalKey(Schema.Array(Schema.String)),
  minSize: Size,
  maxSize: Size,
  desiredCapacity: Size,
  /** Propagated to the members at launch (the pool tag, for one). */
  tags: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
})
export type AutoScalingGroupRequest = typeof AutoScalingGroupRequest.Type

/** `message` set: every launch of the group fails with it (a capacity shortage); absent: launches work again. */
export const LaunchFailureRequest = Schema.Struct({ message: Schema.optionalKey(Schema.String) })

export const toGroupSpec = (r: AutoScalingGroupRequest): GroupSpec => ({
  name: r.name,
  launchTemplate: { id: r.launchTemplateId, version: r.launchTemplateVersion ?? "$Default" },
  instanceType: r.instanceType,
  zones: r.zones,
  minSize: r.minSize,
  maxSize: r.maxSize,
  desiredCapacity: r.desiredCapacity,
  tags: r.tags
})

export interface AdminGroup {
  readonly name: string
  readonly minSize: number
  readonly maxSize: number
  readonly desiredCapacity: number
  readonly zones: ReadonlyArray<string>
  readonly launchTemplateId: string | undefined
  readonly launchFailure: string | null
  readonly members: ReadonlyArray<{
    readonly instanceId: string
    readonly nodeName: string
    readonly zone: string
    readonly lifecycleState: string
    readonly launchTime: string
  }>
}

export const groupJson = (g: FakeGroup): AdminGroup => ({
  name: g.name,
  minSize: g.minSize,
  maxSize: g.maxSize,
  desiredCapacity: g.desiredCapacity,
  zones: g.zones,
  launchTemplateId: g.launchTemplate.id,
  launchFailure: g.launchFailure ?? null,
  members: [...g.members.values()].map((m) => ({
    instanceId: m.instance.instanceId,
    nodeName: m.instance.nodeName,
    zone: m.instance.zone.name,
    lifecycleState: lifecycleOf(m),
    launchTime: m.instance.launchTime.toISOString()
  }))
})
