/**
 * The AWS SDK modules, loaded from their CommonJS builds (`dist-cjs`) so tests and the binary run the same
 * code. Workspace tests resolve packages without the `module` condition (vitest.shared.ts): that condition
 * selects the SDK's bundler-only ESM builds, which Node cannot load.
 */
import { createRequire } from "node:module"
import type * as AutoScalingModule from "@aws-sdk/client-auto-scaling"
import type * as Ec2Module from "@aws-sdk/client-ec2"
import type * as CredentialProvidersModule from "@aws-sdk/credential-providers"
import type * as HashNodeModule from "@smithy/hash-node"
import type * as ProtocolHttpModule from "@smithy/protocol-http"
import type * as SignatureV4Module from "@smithy/signature-v4"

const require = createRequire(import.meta.url)

/** AWS credentials as the SDK and the SigV4 signer take them (a provider the SDK memoizes/refreshes). */
export type AwsCredentialIdentityProvider = () => Promise<{
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string
  readonly expiration?: Date
}>

export const Ec2Sdk = require("@aws-sdk/client-ec2") as typeof Ec2Module
export const AutoScalingSdk = require("@aws-sdk/client-auto-scaling") as typeof AutoScalingModule
export const CredentialProviders =
  require("@aws-sdk/credential-providers") as typeof CredentialProvidersModule
export const { Hash } = require("@smithy/hash-node") as typeof HashNodeModule
export const { HttpRequest } = require("@smithy/protocol-http") as typeof ProtocolHttpModule
export const { SignatureV4 } = require("@smithy/signature-v4") as typeof SignatureV4Module
