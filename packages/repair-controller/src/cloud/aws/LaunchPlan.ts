/**
 * Pure planning of a replacement launch: the RunInstances input (launch template, instance type, subnet or
 * zone, tags) from the inspected InstanceFacts alone (ADR 0009), away from the zones to avoid; or why there is
 * none. Launch.ts carries it out.
 */
import { createHash } from "node:crypto"
import type { RunInstancesCommandInput } from "@aws-sdk/client-ec2"
import { REPLACES_TAG } from "@nodemend/reason-codes"
import { Result } from "effect"
import type { InstanceFacts } from "../CloudProvider.ts"
import type { AwsSubnet } from "../../config/AwsConfig.ts"
import type { AwsInstanceRef } from "./AwsProviderId.ts"
import { type Ec2LaunchFacts, noLaunchTemplate } from "./InstanceFacts.ts"

export interface LaunchSettings {
  /** The instance tag naming the pool; the replacement carries the old instance's value under it. */
  readonly poolLabel: string
  /** Where a replacement may go when its own zone is avoided (`aws.subnets`, in order). */
  readonly subnets: ReadonlyArray<AwsSubnet>
  /** A zone name's id when known: zones to avoid may be named either way. */
  readonly zoneIdOf: (zone: string) => string | undefined
}

export interface LaunchPlan {
  /** RunInstances without its ClientToken (the launch adds the repair's). */
  readonly input: RunInstancesCommandInput
  /** The zone the replacement goes to. */
  readonly zone: string
}

/** EC2 ClientToken: at most 64 ASCII characters. Longer tokens are hashed (still deterministic). */
export const clientTokenFor = (idempotencyToken: string): string =>
  /^[\x21-\x7e]{1,64}$/.test(idempotencyToken)
    ? idempotencyToken
    : createHash("sha256").update(idempotencyToken).digest("hex").slice(0, 64)

const isAvoided = (avoid: ReadonlyArray<string>, zone: string, zoneId: string | undefined) =>
  avoid.includes(zone) || (zoneId !== undefined && avoid.includes(zoneId))

interface Placement {
  readonly zone: string
  readonly subnetId: string | undefined
}

/** The old instance's zone and subnet, unless that zone is avoided: then the first configured subnet outside. */
const placement = (
  zone: string,
  subnetId: string | undefined,
  avoid: ReadonlyArray<string>,
  settings: LaunchSettings
): Result.Result<Placement, string> => {
  if (!isAvoided(avoid, zone, settings.zoneIdOf(zone))) {
    return Result.succeed({
      zone,
      subnetId: subnetId ?? settings.subnets.find((s) => s.zone === zone)?.subnetId
    })
  }
  const other = settings.subnets.find((s) => !isAvoided(avoid, s.zone, s.zoneId ?? settings.zoneIdOf(s.zone)))
  return other
    ? Result.succeed({ zone: other.zone, subnetId: other.subnetId })
    : Result.fail(`zone ${zone} is shifted away and aws.subnets lists no subnet outside ${avoid.join(", ")}`)
}

const tagsOf = (facts: InstanceFacts, settings: LaunchSettings, old: AwsInstanceRef) => [
  ...(facts.pool !== undefined ? [{ Key: settings.poolLabel, Value: facts.pool }] : []),
  { Key: REPLACES_TAG, Value: old.instanceId }
]

/** The RunInstances input for the replacement of `old`, or why nodemend cannot launch one. */
export const launchPlan = (
  facts: InstanceFacts,
  avoidZones: ReadonlyArray<string>,
  settings: LaunchSettings,
  old: AwsInstanceRef
): Result.Result<LaunchPlan, string> => {
  const launch: Ec2LaunchFacts = facts.launch
  if (!launch.launchTemplateId) return Result.fail(noLaunchTemplate(`instance ${old.instanceId}`))
  if (!launch.instanceType) return Result.fail(`EC2 reports no instance type for ${old.instanceId}`)
  const { launchTemplateId, instanceType } = launch
  return placement(facts.zone ?? old.zone, launch.subnetId, avoidZones, settings).pipe(
    Result.map(({ zone, subnetId }) => ({
      zone,
      input: {
        MinCount: 1,
        MaxCount: 1,
        LaunchTemplate: {
          LaunchTemplateId: launchTemplateId,
          Version: launch.launchTemplateVersion ?? "$Default"
        },
        InstanceType: instanceType as RunInstancesCommandInput["InstanceType"],
        ...(subnetId ? { SubnetId: subnetId } : { Placement: { AvailabilityZone: zone } }),
        TagSpecifications: [{ ResourceType: "instance" as const, Tags: tagsOf(facts, settings, old) }]
      }
    }))
  )
}
