/**
 * How nodemend's binaries reach the API server: server URL, TLS material and a bearer token source, from
 * kubeconfig files (current or named context) or the in-cluster service account. Supports what node credentials
 * use: client certificates and keys (files or inline data), bearer tokens (inline or file), and exec
 * credential plugins (e.g. `aws eks get-token`), whose tokens are cached until shortly before they expire.
 *
 * Every binary talks to the API server through this and KubeHttp.ts rather than @kubernetes/client-node
 * (ADR 0011): its generated models cost tens of MiB at import, and a keep-alive agent reuses one TLS
 * connection (client-node 2.0.1 opens a new one per request).
 */
import { Data, Schema } from "effect"
import { execFile } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { homedir } from "node:os"
import { delimiter, dirname, isAbsolute, join } from "node:path"
import { parse as parseYaml } from "yaml"

export class KubeAccessError extends Data.TaggedError("KubeAccessError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

const Named = <S extends Schema.Top>(field: string, inner: S) =>
  Schema.Struct({ name: Schema.String, [field]: inner } as { name: typeof Schema.String } & Record<string, S>)

const ExecConfig = Schema.Struct({
  command: Schema.String,
  args: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))),
  env: Schema.optional(
    Schema.NullOr(Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String })))
  ),
  apiVersion: Schema.optional(Schema.String)
})
const ClusterEntry = Schema.Struct({
  server: Schema.String,
  "certificate-authority": Schema.optional(Schema.String),
  "certificate-authority-data": Schema.optional(Schema.String),
  "insecure-skip-tls-verify": Schema.optional(Schema.Boolean),
  "tls-server-name": Schema.optional(Schema.String)
})
const UserEntry = Schema.Struct({
  "client-certificate": Schema.optional(Schema.String),
  "client-certificate-data": Schema.optional(Schema.String),
  "client-key": Schema.optional(Schema.String),
  "client-key-data": Schema.optional(Schema.String),
  token: Schema.optional(Schema.String),
  tokenFile: Schema.optional(Schema.String),
  exec: Schema.optional(ExecConfig)
})
/** Every list and the current context may be missing from one file of a $KUBECONFIG list (kubectl merges them). */
const Kubeconfig = Schema.Struct({
  clusters: Schema.optional(Schema.NullOr(Schema.Array(Named("cluster", ClusterEntry)))),
  users: Schema.optional(Schema.NullOr(Schema.Array(Named("user", Schema.NullOr(UserEntry))))),
  contexts: Schema.optional(
    Schema.NullOr(
      Schema.Array(
        Named("context", Schema.Struct({ cluster: Schema.String, user: Schema.optional(Schema.String) }))
      )
    )
  ),
  "current-context": Schema.optional(Schema.String)
})
const ExecCredential = Schema.Struct({
  status: Schema.Struct({
    token: Schema.optional(Schema.String),
    expirationTimestamp: Schema.optional(Schema.String)
  })
})

export interface KubeAccess {
  readonly server: string
  readonly ca: Buffer | undefined
  readonly cert: Buffer | undefined
  readonly key: Buffer | undefined
  readonly insecure: boolean
  readonly serverName: string | undefined
  /** The bearer token for the next request, if the credentials use one. */
  readonly token: () => Promise<string | undefined>
}

const SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"

const fromFileOrData = (
  base: string,
  file: string | undefined,
  data: string | undefined
): Buffer | undefined =>
  data !== undefined
    ? Buffer.from(data, "base64")
    : file !== undefined
      ? readFileSync(isAbsolute(file) ? file : join(base, file))
      : undefined

/** Re-reads a token file at most once a minute (projected service-account tokens rotate). */
const fileToken = (path: string): (() => Promise<string>) => {
  let cached = ""
  let readAt = 0
  return async () => {
    if (Date.now() - readAt > 60_000) {
      cached = readFileSync(path, "utf8").trim()
      readAt = Date.now()
    }
    return cached
  }
}

const execToken = (exec: typeof ExecConfig.Type, base: string): (() => Promise<string | undefined>) => {
  let cached: { token: string; until: number } | undefined
  return () => {
    if (cached !== undefined && Date.now() < cached.until) return Promise.resolve(cached.token)
    return new Promise((resolve, reject) => {
      const env = { ...process.env, ...Object.fromEntries((exec.env ?? []).map((e) => [e.name, e.value])) }
      const command =
        exec.command.includes("/") && !isAbsolute(exec.command) ? join(base, exec.command) : exec.command
      execFile(
        command,
        [...(exec.args ?? [])],
        { env, timeout: 30_000, maxBuffer: 1 << 20 },
        (err, stdout) => {
          if (err !== null)
            return reject(
              new KubeAccessError({ detail: `exec credential plugin ${exec.command} failed: ${err.message}` })
            )
          let parsed: unknown
          try {
            parsed = JSON.parse(stdout)
          } catch {
            return reject(
              new KubeAccessError({ detail: `exec credential plugin ${exec.command} printed no JSON` })
            )
          }
          const decoded = Schema.decodeUnknownOption(ExecCredential)(parsed)
          if (decoded._tag === "None" || decoded.value.status.token === undefined)
            return reject(
              new KubeAccessError({ detail: `exec credential plugin ${exec.command} returned no token` })
            )
          const expires = Date.parse(decoded.value.status.expirationTimestamp ?? "")
          cached = {
            token: decoded.value.status.token,
            until: Number.isFinite(expires) ? expires - 30_000 : Date.now() + 60_000
          }
          resolve(cached.token)
        }
      )
    })
  }
}

/** One kubeconfig file, decoded; relative paths in it resolve against `base`, its directory. */
interface KubeconfigFile {
  readonly path: string
  readonly base: string
  readonly doc: typeof Kubeconfig.Type
}

const readKubeconfig = (path: string): KubeconfigFile => {
  let doc: unknown
  try {
    doc = parseYaml(readFileSync(path, "utf8"))
  } catch (e) {
    throw new KubeAccessError({ detail: `cannot read kubeconfig ${path}: ${(e as Error).message}` })
  }
  const decoded = Schema.decodeUnknownResult(Kubeconfig)(doc)
  if (decoded._tag === "Failure")
    throw new KubeAccessError({ detail: `invalid kubeconfig ${path}: ${decoded.failure.message}` })
  return { path, base: dirname(path), doc: decoded.success }
}

/**
 * The credentials of `context` (default: the current context) in one kubeconfig file or, as kubectl merges
 * $KUBECONFIG, several: the first file that names an entry wins, and relative paths resolve against the
 * directory of the file the entry came from.
 */
export const kubeAccessFromKubeconfig = (
  path: string | ReadonlyArray<string>,
  context?: string
): KubeAccess => {
  const files = (typeof path === "string" ? [path] : path).map(readKubeconfig)
  const where = files.map((f) => f.path).join(":")
  const find = <E extends { readonly name: string }>(
    pick: (f: KubeconfigFile) => ReadonlyArray<E> | null | undefined,
    name: string | undefined
  ) => {
    for (const f of files) {
      const entry = (pick(f) ?? []).find((e) => e.name === name)
      if (entry !== undefined) return { entry, base: f.base }
    }
    return undefined
  }
  const contextName =
    context ?? files.map((f) => f.doc["current-context"]).find((c) => c !== undefined && c !== "")
  const ctx = find((f) => f.doc.contexts, contextName)?.entry.context as
    | { cluster: string; user?: string }
    | undefined
  if (ctx === undefined)
    throw new KubeAccessError({ detail: `kubeconfig ${where}: no context "${contextName ?? ""}"` })
  const clusterEntry = find((f) => f.doc.clusters, ctx.cluster)
  if (clusterEntry === undefined)
    throw new KubeAccessError({ detail: `kubeconfig ${where}: no cluster "${ctx.cluster}"` })
  const cluster = clusterEntry.entry.cluster as typeof ClusterEntry.Type
  const userEntry = find((f) => f.doc.users, ctx.user)
  const user = (userEntry?.entry.user ?? {}) as typeof UserEntry.Type
  const base = userEntry?.base ?? clusterEntry.base
  const token: () => Promise<string | undefined> =
    user.token !== undefined
      ? () => Promise.resolve(user.token)
      : user.tokenFile !== undefined
        ? fileToken(isAbsolute(user.tokenFile) ? user.tokenFile : join(base, user.tokenFile))
        : user.exec !== undefined
          ? execToken(user.exec, base)
          : () => Promise.resolve(undefined)
  return {
    server: cluster.server.replace(/\/+$/, ""),
    ca: fromFileOrData(
      clusterEntry.base,
      cluster["certificate-authority"],
      cluster["certificate-authority-data"]
    ),
    cert: fromFileOrData(base, user["client-certificate"], user["client-certificate-data"]),
    key: fromFileOrData(base, user["client-key"], user["client-key-data"]),
    insecure: cluster["insecure-skip-tls-verify"] === true,
    serverName: cluster["tls-server-name"],
    token
  }
}

export const kubeAccessInCluster = (): KubeAccess => {
  const host = process.env.KUBERNETES_SERVICE_HOST
  const port = process.env.KUBERNETES_SERVICE_PORT ?? "443"
  if (host === undefined)
    throw new KubeAccessError({
      detail: "no kubeconfig given and not running in a pod (KUBERNETES_SERVICE_HOST unset)"
    })
  return {
    server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
    ca: readFileSync(join(SA_DIR, "ca.crt")),
    cert: undefined,
    key: undefined,
    insecure: false,
    serverName: undefined,
    token: fileToken(join(SA_DIR, "token"))
  }
}

/** The agent's: the given kubeconfig file, else the in-cluster service account. */
export const loadKubeAccess = (kubeconfigPath: string | undefined): KubeAccess =>
  kubeconfigPath === undefined ? kubeAccessInCluster() : kubeAccessFromKubeconfig(kubeconfigPath)

export interface DiscoverOptions {
  /** An explicit kubeconfig file (a flag); wins over everything else. */
  readonly path?: string | undefined
  readonly context?: string | undefined
  /**
   * Order after $KUBECONFIG: the service account before ~/.kube/config (a controller in a pod) or after it
   * (kubectl's order, for the plugin).
   */
  readonly inClusterFirst: boolean
}

/**
 * Credentials found as kubectl finds them: `path`, else $KUBECONFIG (a list of files), else the in-cluster
 * service account and ~/.kube/config in the order asked. `paths`: the kubeconfig files used (none in-cluster).
 */
export const discoverKubeAccess = (
  options: DiscoverOptions
): { readonly access: KubeAccess; readonly paths: ReadonlyArray<string> } => {
  const fromFiles = (paths: ReadonlyArray<string>) => ({
    access: kubeAccessFromKubeconfig(paths, options.context),
    paths
  })
  if (options.path) return fromFiles([options.path])
  const env = (process.env.KUBECONFIG ?? "").split(delimiter).filter((p) => p !== "" && existsSync(p))
  if (env.length > 0) return fromFiles(env)
  const inCluster = process.env.KUBERNETES_SERVICE_HOST
    ? () => ({ access: kubeAccessInCluster(), paths: [] })
    : undefined
  const home = join(homedir(), ".kube", "config")
  const fromHome = existsSync(home) ? () => fromFiles([home]) : undefined
  const found = options.inClusterFirst ? (inCluster ?? fromHome) : (fromHome ?? inCluster)
  if (found === undefined)
    throw new KubeAccessError({
      detail:
        "no kubeconfig found: pass --kubeconfig or set KUBECONFIG (or run in a pod with a service account)"
    })
  return found()
}
