/**
 * `kubectl nodemend logs <node...> | -l <selector>`: asks each node's agent for a log bundle (a NodeDiagnostic
 * named after the node), shows progress, downloads the bundle (kubelet proxy for `node`, the GET twin of the
 * presigned URL otherwise) and deletes the NodeDiagnostics it created, whatever happens.
 */
import { mkdir } from "node:fs/promises"
import { join } from "node:path"
import { type KubeHttp, type List, NODES_PATH, type Node, nodePath } from "@nodemend/kube-access"
import {
  type CaptureProgress,
  captureProgress,
  type LogCategory,
  NODE_DIAGNOSTICS_PATH,
  NodeDiagnostic,
  nodeDiagnosticBody,
  nodeDiagnosticPath
} from "@nodemend/kube-access/NodeDiagnostic"
import { Clock, Effect, Schema } from "effect"
import { describeDigest, UntrustedBundle } from "./bundleVerification.ts"
import { downloadThroughApiServer, downloadUrl, type ExpectedBundle } from "./download.ts"
import { PluginError } from "./errors.ts"
import { kubeletProxyBundlePath, PLUGIN_LABEL, urlForNode } from "./nodeDiagnostics.ts"

export interface LogsOptions {
  readonly nodes: ReadonlyArray<string>
  readonly selector?: string
  readonly outputDir: string
  readonly timeoutMs: number
  /** PUT URL template (`{node}` is replaced); absent: `node` destination + kubelet proxy download. */
  readonly destinationUrl?: string
  /** GET twin of the PUT URL (template); absent with a destination URL: nothing is downloaded. */
  readonly downloadUrl?: string
  /** Mints per-node PUT/GET URLs (the `--s3` presigner); takes precedence over the URL templates. */
  readonly urlsFor?: (node: string) => Promise<{ readonly put: string; readonly get?: string }>
  readonly categories: ReadonlyArray<LogCategory>
  readonly pollIntervalMs?: number
}

export interface LogsIO {
  readonly progress: (line: string) => void
}

export interface NodeResult {
  readonly node: string
  readonly ok: boolean
  readonly message: string
  readonly file?: string
}

const api = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: (e) => e })

/** Resolves node names or a selector to existing Nodes; unknown names are a clear error. */
export const resolveNodes = (kube: KubeHttp, names: ReadonlyArray<string>, selector?: string) =>
  Effect.gen(function* () {
    if (selector) {
      const list = (yield* kube
        .call("list nodes", "GET", `${NODES_PATH}?labelSelector=${encodeURIComponent(selector)}`)
        .pipe(
          Effect.mapError((e) => new PluginError(`listing nodes (${selector}): ${e.message}`))
        )) as List<Node>
      const found = list.items.map((n) => n.metadata?.name ?? "").filter((n) => n !== "")
      if (found.length === 0)
        return yield* Effect.fail(new PluginError(`no nodes match selector ${selector}`))
      return [...new Set([...names, ...found])]
    }
    if (names.length === 0)
      return yield* Effect.fail(new PluginError("name at least one node, or pass -l <selector>"))
    const missing: string[] = []
    for (const name of names) {
      const exists = yield* kube.call("read node", "GET", nodePath(name)).pipe(
        Effect.as(true),
        Effect.catch((e) =>
          e.code === 404
            ? Effect.succeed(false)
            : Effect.fail(new PluginError(`reading node ${name}: ${e.message}`))
        )
      )
      if (!exists) missing.push(name)
    }
    if (missing.length > 0) {
      return yield* Effect.fail(
        new PluginError(`node${missing.length > 1 ? "s" : ""} not found: ${missing.join(", ")}`)
      )
    }
    return [...names]
  })

const describeProgress = (p: CaptureProgress) =>
  p._tag === "Pending"
    ? "requested, waiting for the node's agent"
    : p._tag === "Running"
      ? "collecting"
      : p.completed.reason

const captureOne = (kube: KubeHttp, node: string, opts: LogsOptions, io: LogsIO) =>
  Effect.gen(function* () {
    const urls = opts.urlsFor
      ? yield* api(() => opts.urlsFor!(node)).pipe(
          Effect.mapError(
            (e) => new PluginError(`${node}: presigning URLs: ${e instanceof Error ? e.message : String(e)}`)
          )
        )
      : opts.destinationUrl
        ? {
            put: urlForNode(opts.destinationUrl, node),
            ...(opts.downloadUrl ? { get: urlForNode(opts.downloadUrl, node) } : {})
          }
        : undefined
    const destination = urls?.put ?? "node"
    // Created here, deleted on the way out whatever happens (Ctrl-C included).
    yield* Effect.acquireRelease(
      kube
        .call(
          "create NodeDiagnostic",
          "POST",
          NODE_DIAGNOSTICS_PATH,
          nodeDiagnosticBody(node, { destination, categories: opts.categories }, { labels: PLUGIN_LABEL })
        )
        .pipe(
          Effect.mapError(
            (e) =>
              new PluginError(
                e.code === 409
                  ? `a NodeDiagnostic for ${node} already exists (another capture?); remove it with: kubectl delete nodediagnostic ${node}`
                  : e.code === 404
                    ? "the NodeDiagnostic CRD is not installed (deploy/crds/nodediagnostics.nodemend.io.yaml)"
                    : `creating NodeDiagnostic ${node}: ${e.message}`
              )
          )
        ),
      () => kube.call("delete NodeDiagnostic", "DELETE", nodeDiagnosticPath(node)).pipe(Effect.ignore)
    )
    io.progress(
      `${node}: requested (destination ${destination === "node" ? "node" : new URL(destination).host})`
    )
    const start = yield* Clock.currentTimeMillis
    let last = ""
    let progress: CaptureProgress = { _tag: "Pending" }
    for (;;) {
      const raw = yield* kube.call("read NodeDiagnostic", "GET", nodeDiagnosticPath(node)).pipe(Effect.option)
      if (raw._tag === "Some") {
        const view = Schema.decodeUnknownOption(NodeDiagnostic)(raw.value)
        if (view._tag === "Some") progress = captureProgress(view.value)
      }
      const now = yield* Clock.currentTimeMillis
      const label = describeProgress(progress)
      if (label !== last) {
        io.progress(`${node}: ${label} (${((now - start) / 1000).toFixed(1)}s)`)
        last = label
      }
      if (progress._tag === "Completed") break
      if (now - start >= opts.timeoutMs) {
        const hint =
          progress._tag === "Pending"
            ? `; the nodemend agent on ${node} never picked it up (is it running there?)`
            : "; the agent is still collecting"
        return yield* Effect.fail(
          new PluginError(`${node}: timed out after ${Math.round(opts.timeoutMs / 1000)}s${hint}`)
        )
      }
      yield* Effect.sleep(opts.pollIntervalMs ?? 1000)
    }
    const completed = progress.completed
    if (completed.reason === "Failure") {
      return yield* Effect.fail(new PluginError(`${node}: capture failed: ${completed.message}`))
    }
    const file = join(opts.outputDir, `${node}-logs.tar.gz`)
    const remaining = Math.max(10_000, opts.timeoutMs - ((yield* Clock.currentTimeMillis) - start))
    // What the node's own agent reported (only it may write this status): the download must be that bundle.
    const expected: ExpectedBundle = { node, digest: completed.bundle }
    const getUrl = urls ? urls.get : undefined
    if (urls && !getUrl) {
      // Nothing downloaded here: the digest goes with the result, for whoever fetches the bundle.
      const reported = completed.bundle ? `; ${describeDigest(completed.bundle)}` : ""
      return {
        node,
        ok: true,
        message: `${completed.reason}: ${completed.message}${reported}`
      } satisfies NodeResult
    }
    const digest = yield* api(() =>
      getUrl
        ? downloadUrl(getUrl, file, remaining, expected)
        : downloadThroughApiServer(kube, kubeletProxyBundlePath(node), file, remaining, expected)
    ).pipe(
      Effect.mapError((e) =>
        e instanceof UntrustedBundle
          ? e
          : new PluginError(`${node}: ${e instanceof Error ? e.message : String(e)}`)
      )
    )
    return {
      node,
      ok: true,
      message: `${completed.reason}, verified ${describeDigest(digest)}`,
      file
    } satisfies NodeResult
  }).pipe(
    Effect.scoped,
    Effect.catch((e) =>
      Effect.succeed<NodeResult>({ node, ok: false, message: e instanceof Error ? e.message : String(e) })
    )
  )

export const logsCommand = (kube: KubeHttp, opts: LogsOptions, io: LogsIO) =>
  Effect.gen(function* () {
    const nodes = yield* resolveNodes(kube, opts.nodes, opts.selector)
    yield* Effect.promise(() => mkdir(opts.outputDir, { recursive: true }))
    return yield* Effect.forEach(nodes, (n) => captureOne(kube, n, opts, io), { concurrency: 10 })
  })
