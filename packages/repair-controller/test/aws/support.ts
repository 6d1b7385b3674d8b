// Shared setup for AWS provider tests against the fake cloud (in memory, no cluster).
import { Effect, Schema } from "effect"
import type { AdminInstance } from "@nodemend/fake-cloud"
import type { AutoScalingPort, CloudProvider, LaunchOptions, NodeRef } from "../../src/cloud/CloudProvider.ts"
import { type AwsClients, makeAwsClients } from "../../src/cloud/aws/AwsClients.ts"
import { AwsConfig, type AwsConfigInput } from "../../src/config/AwsConfig.ts"
import { ZONE_ID_LABEL, ZONE_LABEL } from "@nodemend/reason-codes"

export const CLUSTER_ARN = "arn:aws:eks:us-west-2:111122223333:cluster/demo"
export const LAUNCH_TEMPLATE = "lt-0123456789abcdef0"
export const credentials = async () => ({ accessKeyId: "AKIDFAKE", secretAccessKey: "fake-secret" })

export function awsConfig(endpoint: string, overrides: Partial<AwsConfigInput> = {}): AwsConfig {
  return Schema.decodeUnknownSync(AwsConfig)({
    region: "us-west-2",
    clusterArn: CLUSTER_ARN,
    endpoints: { ec2: endpoint, arcZonalShift: endpoint, autoScaling: endpoint },
    requestTimeoutSeconds: 2,
    terminationWaitSeconds: 10,
    subnets: [
      { subnetId: "subnet-0fake00000000000a", zone: "us-west-2a", zoneId: "usw2-az1" },
      { subnetId: "subnet-0fake00000000000b", zone: "us-west-2b", zoneId: "usw2-az2" }
    ],
    ...overrides
  })
}

export const clientsFor = (config: AwsConfig): AwsClients => makeAwsClients(config, credentials)

/** The NodeRef a kubelet on this instance would have produced. */
export function nodeRefOf(i: AdminInstance, extra: Partial<NodeRef> = {}): NodeRef {
  return {
    name: i.nodeName,
    providerID: i.providerID,
    labels: {
      "node.kubernetes.io/instance-type": i.instanceType,
      [ZONE_LABEL]: i.zone,
      [ZONE_ID_LABEL]: i.zoneId,
      "nodemend.io/pool": "gpu",
      ...extra.labels
    },
    annotations: { ...extra.annotations }
  }
}

export const failureOf = <A, E>(e: Effect.Effect<A, E>) => Effect.flip(e)

/**
 * The provider's Auto Scaling port, asked for the group the facts name (as the owner port passes the group its
 * proof found: owner/autoScalingOwner.ts).
 */
export const groupsOf = (p: CloudProvider["Service"]) => {
  const port: AutoScalingPort | undefined = p.autoScaling
  if (port === undefined) throw new Error(`provider ${p.name} has no Auto Scaling port`)
  return {
    ...port,
    launchReplacement: (node: NodeRef, options: LaunchOptions) => {
      const owner = options.facts.owner
      if (owner.kind !== "autoScaling") throw new Error(`${node.name}: the facts name no Auto Scaling group`)
      return port.launchReplacement(node, owner.group, options)
    }
  }
}
