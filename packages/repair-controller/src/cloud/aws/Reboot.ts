/**
 * `reboot`: RebootInstances for a running instance. Waiting for the node to come back is the controller's reboot
 * step; the provider does not watch Nodes.
 */
import type { EC2Client } from "@aws-sdk/client-ec2"
import { Effect } from "effect"
import { CloudError, type NodeRef } from "../CloudProvider.ts"
import { awsInstanceRef } from "./AwsProviderId.ts"
import { Ec2Sdk } from "./awsSdk.ts"
import { awsCall } from "./Ec2ErrorMapping.ts"
import type { Ec2Instances } from "./Ec2Instances.ts"

export const makeReboot = (ec2: EC2Client, instances: Ec2Instances) => (node: NodeRef) =>
  Effect.gen(function* () {
    const ref = yield* awsInstanceRef(node.providerID)
    const state = yield* instances.state(ref.instanceId)
    if (state !== "running") {
      return yield* new CloudError({
        operation: "RebootInstances",
        message: `instance ${ref.instanceId} of node ${node.name} is ${state}, not running; not rebooting`,
        retryable: state === "pending"
      })
    }
    yield* awsCall("RebootInstances", (abortSignal) =>
      ec2.send(new Ec2Sdk.RebootInstancesCommand({ InstanceIds: [ref.instanceId] }), { abortSignal })
    )
  })
