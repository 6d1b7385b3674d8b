/**
 * The AWS SDK service clients, loaded from their CommonJS builds (`dist-cjs`) so tests and the binary run the
 * same code (why: sigv4.ts, which also holds the signer and the credential providers).
 */
import { createRequire } from "node:module"
import type * as AutoScalingModule from "@aws-sdk/client-auto-scaling"
import type * as Ec2Module from "@aws-sdk/client-ec2"
import { loadCredentialProviders } from "./sigv4.ts"

// The signer pieces live in sigv4.ts; re-exported for the modules and tests that take everything AWS from here.
export { type AwsCredentialIdentityProvider, Hash, HttpRequest, SignatureV4 } from "./sigv4.ts"

const require = createRequire(import.meta.url)

export const Ec2Sdk = require("@aws-sdk/client-ec2") as typeof Ec2Module
export const AutoScalingSdk = require("@aws-sdk/client-auto-scaling") as typeof AutoScalingModule
export const CredentialProviders = loadCredentialProviders()
