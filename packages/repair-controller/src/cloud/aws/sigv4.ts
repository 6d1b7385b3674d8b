/**
 * SigV4 signing with the AWS SDK's own signer, shared by the controller's ARC client (signed requests) and
 * kubectl-nodemend's S3 presigning (subpath export `@nodemend/repair-controller/aws-sigv4`). It loads no
 * AWS service client, so the plugin stays quick to start.
 *
 * The modules come from their CommonJS builds (`dist-cjs`) so tests and binaries run the same code:
 * workspace tests resolve packages without the `module` condition (vitest.shared.ts), and that condition
 * selects the SDK's bundler-only ESM builds, which Node cannot load.
 */
import { createRequire } from "node:module"
import type * as CredentialProvidersModule from "@aws-sdk/credential-providers"
import type * as HashNodeModule from "@smithy/hash-node"
import type * as ProtocolHttpModule from "@smithy/protocol-http"
import type * as SignatureV4Module from "@smithy/signature-v4"

const require = createRequire(import.meta.url)

/** AWS credentials as the SigV4 signer takes them. */
export interface AwsCredentials {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string
  readonly expiration?: Date
}

/** A credentials provider (the SDK memoizes and refreshes what its chain returns). */
export type AwsCredentialIdentityProvider = () => Promise<AwsCredentials>

export const { Hash } = require("@smithy/hash-node") as typeof HashNodeModule
export const { HttpRequest } = require("@smithy/protocol-http") as typeof ProtocolHttpModule
export const { SignatureV4 } = require("@smithy/signature-v4") as typeof SignatureV4Module

/** The SDK's credential providers (`fromNodeProviderChain`...), loaded on first use: they pull in many modules. */
export const loadCredentialProviders = () =>
  require("@aws-sdk/credential-providers") as typeof CredentialProvidersModule

export interface SignerOptions {
  readonly service: string
  readonly region: string
  readonly credentials: AwsCredentials | AwsCredentialIdentityProvider
  /** S3 signs the path as given (false); every other service escapes it again (the default, true). */
  readonly uriEscapePath?: boolean
  /** S3 presigning leaves the payload hash out of the signature (false). */
  readonly applyChecksum?: boolean
}

/** A SigV4 signer with SHA-256 from Node's crypto. */
export const sigV4Signer = (options: SignerOptions) =>
  new SignatureV4({ ...options, sha256: Hash.bind(null, "sha256") })
