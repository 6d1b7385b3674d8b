/**
 * The AWS SDK modules, always loaded from their CommonJS builds (`dist-cjs`).
 *
 * Why: vitest starts its workers with `--conditions module` (from vitest.shared.ts), and the SDK's
 * `module` export condition points at `dist-es`, bundler-only ESM with extension-less relative
 * imports that Node cannot load. A resolve hook drops the `module` condition for the SDK's own
 * packages only, so tests and the binary run the same code. Under plain Node (no `module`
 * condition) the hook changes nothing.
 */
import { createRequire, registerHooks } from "node:module"
import type * as AutoScalingModule from "@aws-sdk/client-auto-scaling"
import type * as Ec2Module from "@aws-sdk/client-ec2"
import type * as CredentialProvidersModule from "@aws-sdk/credential-providers"
import type * as HashNodeModule from "@smithy/hash-node"
import type * as ProtocolHttpModule from "@smithy/protocol-http"
import type * as SignatureV4Module from "@smithy/signature-v4"

const SDK_SCOPES = /^@(?:aws-sdk|smithy|aws-crypto)\//
const SDK_PARENT = /\/node_modules\/@(?:aws-sdk|smithy|aws-crypto)\//

registerHooks({
  resolve(specifier, context, nextResolve) {
    const fromSdk =
      SDK_SCOPES.test(specifier) || (context.parentURL !== undefined && SDK_PARENT.test(context.parentURL))
    if (fromSdk && context.conditions.includes("module")) {
      return nextResolve(specifier, {
        ...context,
        conditions: context.conditions.filter((c) => c !== "module")
      })
    }
    return nextResolve(specifier, context)
  }
})

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
