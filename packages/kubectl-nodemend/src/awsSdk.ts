/**
 * The AWS SDK pieces `--s3` needs, loaded from their CommonJS builds (as the repair controller's awsSdk.ts).
 * Workspace tests resolve packages without the `module` condition (vitest.shared.ts), which would otherwise
 * select the SDK's bundler-only ESM builds.
 */
import { createRequire } from "node:module"
import type * as CredentialProvidersModule from "@aws-sdk/credential-providers"
import type * as HashNodeModule from "@smithy/hash-node"
import type * as ProtocolHttpModule from "@smithy/protocol-http"
import type * as SignatureV4Module from "@smithy/signature-v4"

const require = createRequire(import.meta.url)

export const { Hash } = require("@smithy/hash-node") as typeof HashNodeModule
export const { HttpRequest } = require("@smithy/protocol-http") as typeof ProtocolHttpModule
export const { SignatureV4 } = require("@smithy/signature-v4") as typeof SignatureV4Module
/** Loaded on first use only (it pulls in many SDK modules). */
export const loadCredentialProviders = () =>
  require("@aws-sdk/credential-providers") as typeof CredentialProvidersModule
