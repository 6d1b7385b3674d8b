/**
 * The AWS SDK pieces `--s3` needs, loaded from their CommonJS builds (same approach as the repair
 * controller's awsSdk.ts): vitest runs with `--conditions module`, and the SDK's `module` condition points at
 * bundler-only ESM that Node cannot load, so a resolve hook drops that condition for the SDK's packages only.
 * Under plain Node it changes nothing.
 */
import { createRequire, registerHooks } from "node:module"
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

export const { Hash } = require("@smithy/hash-node") as typeof HashNodeModule
export const { HttpRequest } = require("@smithy/protocol-http") as typeof ProtocolHttpModule
export const { SignatureV4 } = require("@smithy/signature-v4") as typeof SignatureV4Module
/** Loaded on first use only (it pulls in many SDK modules). */
export const loadCredentialProviders = () =>
  require("@aws-sdk/credential-providers") as typeof CredentialProvidersModule
