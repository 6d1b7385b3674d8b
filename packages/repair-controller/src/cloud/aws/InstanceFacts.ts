/**
 * An EC2 `Instance` as nodemend reads it (pure): its state, whether it is a given Node, the facts a replacement
 * is built from, and who replaces it. Only EC2's answer is read, never the Node's labels or annotations, which
 * the node can write itself (ADR 0009).
 */
import type { Instance } from "@aws-sdk/client-ec2"
import type { InstanceFacts, InstanceState, Owner, Replacement } from "../CloudProvider.ts"
import { ASG_NAME_TAG, EC2_LAUNCH_TEMPLATE_ID_TAG, EC2_LAUNCH_TEMPLATE_VERSION_TAG } from "./AwsNodeLabels.ts"

const KNOWN_STATES: ReadonlySet<string> = new Set([
  "pending",
  "running",
  "stopping",
  "stopped",
  "shutting-down",
  "terminated"
])

/** EC2's state name; a name we do not know counts as gone (`not-found`), never as running. */
export const instanceState = (name: string | undefined): InstanceState =>
  name !== undefined && KNOWN_STATES.has(name) ? (name as InstanceState) : "not-found"

const GONE: ReadonlySet<InstanceState> = new Set(["shutting-down", "terminated", "not-found"])

/** Shutting down, terminated or unknown to EC2: there is nothing left to terminate. */
export const isGone = (state: InstanceState): boolean => GONE.has(state)

/**
 * Whether EC2's instance is the Node named `nodeName`. On EKS a node registers under the instance's private DNS
 * name (or, with resource-name hostnames, its id), and the node's credentials are issued for that name, so the
 * name binds the Node to the instance; a providerID alone does not (a node can re-register with any).
 */
export const instanceIsNode = (i: Instance, nodeName: string): boolean => {
  const name = nodeName.toLowerCase()
  const dns = (i.PrivateDnsName ?? "").toLowerCase()
  const id = (i.InstanceId ?? "").toLowerCase()
  if (id !== "" && (name === id || name.startsWith(`${id}.`))) return true
  return dns !== "" && (name === dns || name === dns.split(".")[0])
}

/** `InstanceFacts.launch` on AWS: what EC2 reports, each key present only when EC2 says. */
export interface Ec2LaunchFacts {
  readonly instanceType?: string
  readonly subnetId?: string
  readonly launchTemplateId?: string
  readonly launchTemplateVersion?: string
  readonly autoScalingGroup?: string
}

/** Why nodemend launches no replacement of `subject` (an instance without EC2's launch template tag). */
export const noLaunchTemplate = (subject: string, alsoWhy = ""): string =>
  `${subject} carries no ${EC2_LAUNCH_TEMPLATE_ID_TAG} tag (it was not launched from a launch template)${alsoWhy}; nodemend launches replacements only from the template EC2 recorded on the instance`

const tagOf = (i: Instance, key: string) => i.Tags?.find((t) => t.Key === key)?.Value

/** Tags Karpenter (AWS provider, v1) writes on the instances it launches. */
const KARPENTER_NODECLAIM_TAG = "karpenter.sh/nodeclaim"
const KARPENTER_NODEPOOL_TAG = "karpenter.sh/nodepool"
const KARPENTER_NODECLASS_TAG = "karpenter.k8s.aws/ec2nodeclass"

/**
 * Who owns the instance, from EC2's tags alone: its Auto Scaling group, Karpenter (a NodeClaim, which the
 * controller must then find), or nobody but its launch template (standalone: nodemend replaces it). Without any
 * of these nobody can replace it, and the repair is refused before anything is touched. The nodepool tag alone
 * is no sign of Karpenter: it is also the default pool label (DEFAULT_POOL_LABEL), which node groups carry and
 * nodemend itself writes on the replacements it launches (LaunchPlan.ts); only Karpenter writes its nodeclaim and
 * ec2nodeclass tags.
 */
export const ownerOf = (i: Instance, launch: Ec2LaunchFacts): Owner => {
  if (launch.autoScalingGroup) return { kind: "autoScaling", group: launch.autoScalingGroup }
  const claim = tagOf(i, KARPENTER_NODECLAIM_TAG)
  const pool = tagOf(i, KARPENTER_NODEPOOL_TAG)
  if (claim !== undefined || tagOf(i, KARPENTER_NODECLASS_TAG) !== undefined)
    return { kind: "karpenter", nodeClaim: claim ?? "", ...(pool !== undefined ? { nodePool: pool } : {}) }
  if (launch.launchTemplateId) return { kind: "standalone" }
  return {
    kind: "unknown",
    why: noLaunchTemplate("the instance", ", is in no Auto Scaling group and is not Karpenter's")
  }
}

/** The facts a replacement is built from, as EC2 reports them. */
export const instanceFacts = (i: Instance, poolLabel: string): InstanceFacts => {
  const launch: Record<string, string> = {}
  const put = (k: keyof Ec2LaunchFacts, v: string | undefined) => {
    if (v) launch[k] = v
  }
  put("instanceType", i.InstanceType)
  put("subnetId", i.SubnetId)
  put("launchTemplateId", tagOf(i, EC2_LAUNCH_TEMPLATE_ID_TAG))
  put("launchTemplateVersion", tagOf(i, EC2_LAUNCH_TEMPLATE_VERSION_TAG))
  put("autoScalingGroup", tagOf(i, ASG_NAME_TAG))
  const zone = i.Placement?.AvailabilityZone
  const pool = tagOf(i, poolLabel)
  return {
    instanceId: i.InstanceId ?? "",
    state: instanceState(i.State?.Name),
    ...(zone ? { zone } : {}),
    ...(pool ? { pool } : {}),
    launch,
    owner: ownerOf(i, launch)
  }
}

/** A new instance as the controller waits for it (id, the Node name it registers as, zone); none without an id. */
export const replacementFrom = (i: Instance | undefined, zone?: string): Replacement | undefined => {
  if (!i?.InstanceId) return undefined
  const where = i.Placement?.AvailabilityZone || zone
  return {
    instanceId: i.InstanceId,
    ...(i.PrivateDnsName ? { nodeName: i.PrivateDnsName } : {}),
    ...(where ? { zone: where } : {})
  }
}
