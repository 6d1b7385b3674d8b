// Shared setup for AWS provider tests against the fake cloud (in memory, no cluster).
import { Effect, Schema } from "effect"
import type { AdminInstance } from "@nodemend/fake-cloud"
import type { AutoScalingPort, CloudProvider, NodeRef } from "../../src/cloud/CloudProvider.ts"
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

/** The AWS provider's Auto Scaling port (an Auto Scaling member's replacement comes from its group). */
export const groupsOf = (p: CloudProvider["Service"]): AutoScalingPort => {
  if (p.autoScaling === undefined) throw new Error(`provider ${p.name} has no Auto Scaling port`)
  return p.autoScaling
}
