/**
 * `kubectl nodemend logs --repair <node>`: downloads the bundle a repair captured (repairBundle.ts says which)
 * from S3 with the operator's AWS credentials (the SDK's default chain), through a GET presigned for a few
 * minutes, into `<dir>/<node>-logs.tar.gz`, checked against the digest the node's agent reported (download.ts).
 * `--endpoint-url` (or `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`) points it at another S3 endpoint.
 */
import { join } from "node:path"
import {
  type ConfigMap,
  type CoreEvent,
  type KubeHttp,
  type List,
  NODE_EVENT_NAMESPACE,
  namespacedPath
} from "@nodemend/kube-access"
import { Effect } from "effect"
import { describeDigest } from "./bundleVerification.ts"
import { downloadUrl } from "./download.ts"
import { k8sCode, PluginError } from "./errors.ts"
import { repairBundleOf } from "./repairBundle.ts"
import { journalName } from "./repairJournal.ts"
import { presignS3Url, s3ObjectLocation } from "./s3Presign.ts"

export interface RepairLogsOptions {
  readonly node: string
  readonly outputDir: string
  readonly timeoutMs: number
  readonly controllerNamespace: string
  readonly region?: string
  readonly endpoint?: string
}

const get = <A>(kube: KubeHttp, operation: string, path: string): Promise<A> =>
  Effect.runPromise(kube.call(operation, "GET", path)) as Promise<A>

/** The AWS settings of the download: flags first, then the SDK's environment variables. */
export const s3Target = (
  flags: { readonly region?: string; readonly endpoint?: string },
  env: Readonly<Record<string, string | undefined>> = process.env
): { readonly region: string; readonly endpoint?: string } => {
  const region = flags.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined)
  if (!region) throw new PluginError("logs --repair needs --region (or AWS_REGION)")
  const endpoint = flags.endpoint ?? (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined)
  return { region, ...(endpoint ? { endpoint } : {}) }
}

/** Downloads the node's repair bundle; returns the result line. */
export const repairLogsCommand = async (kube: KubeHttp, options: RepairLogsOptions): Promise<string> => {
  const { node } = options
  const target = s3Target(options)
  const sel = encodeURIComponent(`involvedObject.kind=Node,involvedObject.name=${node}`)
  const events = (
    await get<List<CoreEvent>>(
      kube,
      "list events",
      `${namespacedPath("v1", "events", NODE_EVENT_NAMESPACE)}?fieldSelector=${sel}`
    )
  ).items
  const journal = await get<ConfigMap>(
    kube,
    "read repair journal",
    namespacedPath("v1", "configmaps", options.controllerNamespace, journalName(node))
  ).catch((e: unknown) => {
    if (k8sCode(e) === 404) return undefined
    throw e
  })
  const bundle = repairBundleOf(node, journal, events)
  if (!bundle)
    throw new PluginError(
      `${node}: no captured log bundle on record (no repair journal entry or repair controller LogCapture/RepairSucceeded Event names one; Events expire after an hour)`
    )
  const { fromNodeProviderChain } = (
    await import("@nodemend/repair-controller/aws-sigv4")
  ).loadCredentialProviders()
  const credentials = await fromNodeProviderChain()().catch((e: unknown) => {
    throw new PluginError(`no AWS credentials: ${e instanceof Error ? e.message : String(e)}`)
  })
  const where = s3ObjectLocation(bundle.bucket, bundle.key, target.region, target.endpoint)
  const url = await presignS3Url({
    method: "GET",
    ...where,
    region: target.region,
    credentials,
    expiresInSeconds: Math.ceil(options.timeoutMs / 1000) + 60
  })
  const file = join(options.outputDir, `${node}-logs.tar.gz`)
  const got = await downloadUrl(url, file, options.timeoutMs, { node, digest: bundle.digest })
  return `${node}: s3://${bundle.bucket}/${bundle.key} (${describeDigest(got)}) -> ${file}`
}
