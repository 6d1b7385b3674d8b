/**
 * `inspect`: the instance behind a Node's providerID, vouched for by EC2 before a repair touches the node. The
 * providerID only names a candidate (a node can re-register with any); the instance's private DNS name or id must
 * be the node's name, the name its credentials were issued for (ADR 0009).
 */
import { Effect } from "effect"
import { InstanceMismatch, type NodeRef } from "../CloudProvider.ts"
import type { AwsConfig } from "../../config/AwsConfig.ts"
import { awsInstanceRef } from "./AwsProviderId.ts"
import type { Ec2Instances } from "./Ec2Instances.ts"
import { instanceFacts, instanceIsNode } from "./InstanceFacts.ts"

export const makeInspect =
  (instances: Ec2Instances, config: Pick<AwsConfig, "poolLabel">) => (node: NodeRef) =>
    Effect.gen(function* () {
      const ref = yield* awsInstanceRef(node.providerID)
      const mismatch = (message: string) =>
        new InstanceMismatch({ node: node.name, providerID: node.providerID, message })
      const i = yield* instances.describe(ref.instanceId)
      if (i === undefined) return yield* mismatch(`EC2 has no instance ${ref.instanceId}`)
      if (!instanceIsNode(i, node.name))
        return yield* mismatch(
          `instance ${ref.instanceId} is not node ${node.name}: its private DNS name is ${i.PrivateDnsName || "(none)"}`
        )
      return instanceFacts(i, config.poolLabel)
    }).pipe(Effect.withSpan("AwsCloudProvider.inspect"))
