/**
 * Parses the `spec.providerID` the AWS cloud-controller-manager (and EKS) writes on a Node:
 * `aws:///<availability-zone>/<instance-id>`, e.g. `aws:///us-west-2a/i-0123456789abcdef0`.
 * Anything else is an InvalidProviderID: the controller must never guess which instance to terminate.
 */
import { Effect } from "effect"
import { InvalidProviderID } from "../CloudProvider.ts"

export interface AwsInstanceRef {
  readonly zone: string
  readonly instanceId: string
}

/** EC2 instance ids: `i-` followed by 8 (legacy) or 17 lower-case hex digits. */
const INSTANCE_ID = /^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$/
/** Availability zone names (`us-west-2a`, `us-gov-west-1b`, local zones `us-west-2-lax-1a`, wavelength). */
const ZONE = /^[a-z]{2}(?:-[a-z0-9]+)+[a-z]$/
const PREFIX = "aws:///"

/** Pure parse: the reference, or the reason it is not one. */
export function parseAwsProviderId(providerID: string): AwsInstanceRef | InvalidProviderID {
  const fail = (why: string) =>
    new InvalidProviderID({ providerID, message: `providerID ${JSON.stringify(providerID)}: ${why}` })
  if (!providerID.startsWith(PREFIX)) {
    return fail(`expected the form aws:///<zone>/<instance-id>`)
  }
  const parts = providerID.slice(PREFIX.length).split("/")
  if (parts.length !== 2) return fail(`expected exactly <zone>/<instance-id> after aws:///`)
  const [zone, instanceId] = parts as [string, string]
  if (!ZONE.test(zone)) return fail(`${JSON.stringify(zone)} is not an availability zone name`)
  if (!INSTANCE_ID.test(instanceId)) return fail(`${JSON.stringify(instanceId)} is not an EC2 instance id`)
  return { zone, instanceId }
}

export const awsInstanceRef = (providerID: string): Effect.Effect<AwsInstanceRef, InvalidProviderID> => {
  const r = parseAwsProviderId(providerID)
  return r instanceof InvalidProviderID ? Effect.fail(r) : Effect.succeed(r)
}

export const formatAwsProviderId = (ref: AwsInstanceRef): string => `${PREFIX}${ref.zone}/${ref.instanceId}`
