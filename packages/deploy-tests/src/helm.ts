/**
 * Runs the pinned helm binary (tools/helm/build.mjs) on the chart in deploy/helm/nodemend and parses what it
 * renders. Helm's own state (repositories, cache) goes to a throw-away directory, never the user's home.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseAllDocuments } from "yaml"
import { helmPath } from "../../../tools/helm/build.mjs"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"

export const CHART_DIR = join(REPO_ROOT, "deploy", "helm", "nodemend")

/** A rendered Kubernetes object (only the fields every object has are typed). */
export interface KubeObject {
  readonly apiVersion: string
  readonly kind: string
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [k: string]: unknown }
  readonly [k: string]: unknown
}

export interface HelmResult {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

export interface RenderOptions {
  /** The release namespace (`helm template -n`). */
  readonly namespace?: string
  /** Values, passed as a file (`-f`). */
  readonly values?: Record<string, unknown>
  /** Also render crds/ (`--include-crds`). */
  readonly includeCrds?: boolean
  /** `--kube-version`: the cluster's version the chart is rendered for. */
  readonly kubeVersion?: string
}

/** The values a cloudProvider aws install cannot do without (the chart's schema requires them). */
export const AWS_REQUIRED_VALUES = {
  controller: {
    aws: { region: "us-west-2", clusterArn: "arn:aws:eks:us-west-2:111122223333:cluster/prod" }
  }
} as const

export const helm = (args: ReadonlyArray<string>): HelmResult => {
  const home = mkdtempSync(join(tmpdir(), "nodemend-helm-"))
  try {
    const r = spawnSync(helmPath(), args, {
      encoding: "utf8",
      env: {
        ...process.env,
        HELM_CACHE_HOME: join(home, "cache"),
        HELM_CONFIG_HOME: join(home, "config"),
        HELM_DATA_HOME: join(home, "data")
      }
    })
    if (r.error) throw r.error
    return { status: r.status ?? 1, stdout: r.stdout, stderr: r.stderr }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

const withValuesFile = <A>(values: Record<string, unknown> | undefined, f: (args: string[]) => A): A => {
  if (values === undefined) return f([])
  const dir = mkdtempSync(join(tmpdir(), "nodemend-values-"))
  try {
    const file = join(dir, "values.json")
    writeFileSync(file, JSON.stringify(values))
    return f(["-f", file])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** `helm template`; the raw result, for tests that expect a failure. */
export const template = (opts: RenderOptions = {}): HelmResult =>
  withValuesFile(opts.values, (valueArgs) =>
    helm([
      "template",
      "nodemend",
      CHART_DIR,
      "--namespace",
      opts.namespace ?? "nodemend-system",
      ...(opts.includeCrds ? ["--include-crds"] : []),
      ...(opts.kubeVersion ? ["--kube-version", opts.kubeVersion] : []),
      ...valueArgs
    ])
  )

/** `helm lint --strict` with the given values. */
export const lint = (values?: Record<string, unknown>): HelmResult =>
  withValuesFile(values, (valueArgs) => helm(["lint", "--strict", CHART_DIR, ...valueArgs]))

/** Parses multi-document YAML into objects, skipping empty documents; a YAML error throws. */
export const parseObjects = (text: string): KubeObject[] =>
  parseAllDocuments(text).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`invalid YAML: ${doc.errors.map((e) => e.message).join("; ")}`)
    const value = doc.toJS() as KubeObject | null
    return value === null ? [] : [value]
  })

/** Renders the chart and parses it; a helm failure throws with helm's message. */
export const render = (opts: RenderOptions = {}): KubeObject[] => {
  const r = template(opts)
  if (r.status !== 0) throw new Error(`helm template failed (exit ${r.status}):\n${r.stderr}`)
  return parseObjects(r.stdout)
}

/** The object of `kind` named `name` (and in `namespace`, when given); throws when absent. */
export const find = (objects: ReadonlyArray<KubeObject>, kind: string, name: string): KubeObject => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name)
  if (o === undefined)
    throw new Error(
      `no ${kind}/${name} among ${objects.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`
    )
  return o
}
