/** The AWS clients the provider calls: EC2, EC2 Auto Scaling and ARC zonal shift. */
import type { AutoScalingClient } from "@aws-sdk/client-auto-scaling"
import type { EC2Client } from "@aws-sdk/client-ec2"
import { type ArcZonalShiftClientShape, makeArcZonalShiftClient } from "./ArcZonalShiftClient.ts"
import type { AwsConfig } from "../../config/AwsConfig.ts"
import { AutoScalingSdk, type AwsCredentialIdentityProvider, CredentialProviders, Ec2Sdk } from "./awsSdk.ts"

export interface AwsClients {
  readonly ec2: EC2Client
  readonly autoScaling: AutoScalingClient
  readonly arc: ArcZonalShiftClientShape
}

/** SDK clients from config: default credential chain, region, endpoint overrides, retries, timeouts. */
export function makeAwsClients(
  config: AwsConfig,
  credentials: AwsCredentialIdentityProvider = CredentialProviders.fromNodeProviderChain()
): AwsClients {
  const timeoutMs = Math.round(config.requestTimeoutSeconds * 1000)
  const common = {
    region: config.region,
    credentials,
    maxAttempts: config.maxAttempts,
    retryMode: "standard",
    // Without throwOnRequestTimeout the SDK only logs a warning when requestTimeout passes.
    requestHandler: {
      requestTimeout: timeoutMs,
      connectionTimeout: Math.min(timeoutMs, 5000),
      throwOnRequestTimeout: true
    }
  } as const
  return {
    ec2: new Ec2Sdk.EC2Client({
      ...common,
      ...(config.endpoints.ec2 ? { endpoint: config.endpoints.ec2 } : {})
    }),
    autoScaling: new AutoScalingSdk.AutoScalingClient({
      ...common,
      ...(config.endpoints.autoScaling ? { endpoint: config.endpoints.autoScaling } : {})
    }),
    arc: makeArcZonalShiftClient({
      region: config.region,
      endpoint: config.endpoints.arcZonalShift,
      credentials,
      requestTimeoutMs: timeoutMs,
      maxAttempts: config.maxAttempts
    })
  }
}

/** Closes the SDK clients' connection pools (the ARC client keeps none). */
export const closeAwsClients = (clients: AwsClients): void => {
  clients.ec2.destroy()
  clients.autoScaling.destroy()
}
