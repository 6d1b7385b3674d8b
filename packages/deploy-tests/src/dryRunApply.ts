/**
 * Server-side apply with `dryRun=All` and `fieldValidation=Strict`: the API server runs defaulting, schema
 * validation (an unknown or duplicate field is an error, not a warning), admission and CEL rules on every
 * object, and persists nothing (makeApplyClient: the same, stored). Plain HTTPS with the kubeconfig's credentials: the typed client re-serializes
 * bodies through its models and would drop fields it does not know (x-kubernetes-validations in a CRD).
 */
import https from "node:https"
import type { KubeConfig } from "@kubernetes/client-node"
import type { KubeObject } from "./helm.ts"

export const FIELD_MANAGER = "nodemend-chart-test"

export class ApiError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.name = "ApiError"
    this.status = status
  }
}

interface ApiResource {
  readonly name: string
  readonly kind: string
  readonly namespaced: boolean
}

export interface DryRunClient {
  /** Applies `object` in dry-run mode and returns the object the API server would have stored. */
  readonly apply: (object: KubeObject) => Promise<KubeObject>
}

export interface ApplyClient {
  /** Applies `object` for real (server-side apply, Strict field validation) and returns what was stored. */
  readonly apply: (object: KubeObject) => Promise<KubeObject>
  /** Deletes `object` (by kind, namespace and name); absent is fine. */
  readonly remove: (object: KubeObject) => Promise<void>
}

export const makeDryRunClient = (kc: KubeConfig): DryRunClient => ({ apply: makeClient(kc, true).apply })

/** For cluster tests that need rendered objects to take effect (RBAC, admission policies). */
export const makeApplyClient = (kc: KubeConfig): ApplyClient => makeClient(kc, false)

const makeClient = (kc: KubeConfig, dryRun: boolean): ApplyClient => {
  const server = kc.getCurrentCluster()?.server
  if (!server) throw new Error("no current cluster in the kubeconfig")
  const base = server.replace(/\/$/u, "")

  const request = async (
    method: string,
    path: string,
    body?: string,
    contentType?: string
  ): Promise<unknown> => {
    const options: https.RequestOptions = { method, headers: { Accept: "application/json" } }
    await kc.applyToHTTPSOptions(options)
    if (contentType !== undefined) options.headers = { ...options.headers, "Content-Type": contentType }
    return new Promise((resolve, reject) => {
      const req = https.request(new URL(base + path), options, (res) => {
        const chunks: Buffer[] = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          const status = res.statusCode ?? 0
          if (status >= 200 && status < 300) resolve(JSON.parse(text))
          else {
            let message = text
            try {
              message = (JSON.parse(text) as { message?: string }).message ?? text
            } catch {}
            reject(new ApiError(status, `${method} ${path}: ${status} ${message}`))
          }
        })
        res.on("error", reject)
      })
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path}: timed out`)))
      req.on("error", reject)
      req.end(body)
    })
  }

  // Discovery, once per group/version: the resource (plural) and scope of each kind.
  const discovered = new Map<string, Promise<ReadonlyArray<ApiResource>>>()
  const resourceFor = async (apiVersion: string, kind: string): Promise<ApiResource> => {
    let resources = discovered.get(apiVersion)
    if (resources === undefined) {
      const path = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`
      resources = request("GET", path).then((r) => (r as { resources: ApiResource[] }).resources)
      discovered.set(apiVersion, resources)
    }
    const found = (await resources).find((r) => r.kind === kind && !r.name.includes("/"))
    if (found === undefined) throw new Error(`the API server serves no ${kind} in ${apiVersion}`)
    return found
  }

  const objectPath = async (object: KubeObject): Promise<string> => {
    const r = await resourceFor(object.apiVersion, object.kind)
    const prefix = object.apiVersion.includes("/")
      ? `/apis/${object.apiVersion}`
      : `/api/${object.apiVersion}`
    const namespace = object.metadata.namespace
    if (r.namespaced && namespace === undefined)
      throw new Error(`${object.kind}/${object.metadata.name} has no namespace`)
    if (!r.namespaced && namespace !== undefined) {
      throw new Error(
        `${object.kind}/${object.metadata.name} is cluster-scoped but names namespace ${namespace}`
      )
    }
    return `${prefix}${r.namespaced ? `/namespaces/${namespace}` : ""}/${r.name}/${encodeURIComponent(object.metadata.name)}`
  }

  return {
    apply: async (object) => {
      const path =
        (await objectPath(object)) +
        `?${dryRun ? "dryRun=All&" : ""}fieldManager=${FIELD_MANAGER}&force=true&fieldValidation=Strict`
      return (await request(
        "PATCH",
        path,
        JSON.stringify(object),
        "application/apply-patch+yaml"
      )) as KubeObject
    },
    remove: async (object) => {
      await request("DELETE", await objectPath(object)).catch((e: unknown) => {
        if (!(e instanceof ApiError && e.status === 404)) throw e
      })
    }
  }
}
