/**
 * What the config says about pre-termination log capture, checked at start: which policies and reasons ask for
 * it, and the S3 settings of an `s3://` destination. Pure and import-free (program.ts reads it before it loads the
 * capture code or the SDK).
 */
import type { ControllerConfig } from "../config/ControllerConfig.ts"

/** The policies (`conditionType=status`) and reasons that ask for a capture (`captureLogs: true`). */
export const captureRequests = (config: ControllerConfig): ReadonlyArray<string> => [
  ...config.policies.filter((p) => p.captureLogs === true).map((p) => `${p.conditionType}=${p.status}`),
  ...Object.entries(config.reasons)
    .filter(([, k]) => k.captureLogs === true)
    .map(([reason]) => `reasons.${reason}`)
]

/**
 * The start-up warning when something asks for a capture and nothing says where it goes: there is no default
 * destination (a `node` bundle dies with the instance; any other place is the operator's to name), so the step
 * is skipped. Undefined when there is nothing to warn about.
 */
export const missingDestinationWarning = (config: ControllerConfig): string | undefined => {
  if (config.logCapture.destination !== undefined) return undefined
  const asking = captureRequests(config)
  if (asking.length === 0) return undefined
  return `captureLogs is set for ${asking.join(", ")} but logCapture.destination is not: pre-termination log capture is skipped (set it to s3://<bucket>/<prefix>; docs/diagnostics.md)`
}

/** Region and endpoint override of an `s3://` destination: the `aws:` section's, else the environment's region. */
export const s3Settings = (
  config: ControllerConfig,
  env: Readonly<Record<string, string | undefined>> = process.env
): { readonly region?: string; readonly endpoint?: string } => {
  const aws = config.aws as { region?: unknown; endpoints?: { s3?: unknown } }
  const region =
    typeof aws.region === "string" ? aws.region : env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined
  const endpoint = typeof aws.endpoints?.s3 === "string" ? aws.endpoints.s3 : undefined
  return { ...(region ? { region } : {}), ...(endpoint ? { endpoint } : {}) }
}
