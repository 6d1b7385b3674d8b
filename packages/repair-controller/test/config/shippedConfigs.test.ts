// Every controller config the repo ships still decodes under the strict schema: the plain manifest's
// ConfigMap, the chart's config (built from values.yaml as templates/_helpers.tpl builds it; packages/deploy-tests
// decodes the helm-rendered one too), the controller configs in docs/*.md, the demo's and the test fixtures'.
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { controllerConfigYaml } from "../../../demo/src/controllerConfig.mjs"
import { decodeConfig } from "../../src/config/ConfigFile.ts"
import { testConfig } from "../integration/helpers.ts"

const ROOT = fileURLToPath(new URL("../../../..", import.meta.url))
const read = (path: string) => readFileSync(join(ROOT, path), "utf8")

const expectDecodes = (raw: unknown, source: string) => {
  const r = decodeConfig(raw, source)
  expect(Result.isFailure(r) ? r.failure.message : "decodes").toBe("decodes")
}

/** The chart's controller.yaml: `controller.config` plus the keys the `nodemend.controllerConfig` helper sets. */
const chartConfig = (values: { controller: Record<string, unknown> }) => {
  const c = values.controller
  return {
    ...(c.config as Record<string, unknown>),
    cloudProvider: c.cloudProvider,
    namespace: "nodemend-system",
    dryRun: c.dryRun,
    maxUnhealthyPercent: c.maxUnhealthyPercent,
    leaderElection: c.leaderElection,
    server: { port: c.port },
    aws: c.aws,
    ...(c.kwok !== undefined && Object.keys(c.kwok as object).length > 0 ? { kwok: c.kwok } : {})
  }
}

/** ```yaml blocks in docs/*.md that are controller config files (they set `cloudProvider`). */
const docsConfigs = (): ReadonlyArray<readonly [string, string]> =>
  readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .flatMap((f) =>
      [...read(`docs/${f}`).matchAll(/```yaml\n([\s\S]*?)```/gu)]
        .map((m) => m[1]!)
        .filter((text) => /^cloudProvider:/mu.test(text))
        .map((text) => [`docs/${f}`, text] as const)
    )

/** The config the demo writes (packages/demo/src/controllerConfig.mjs), with sample values for its runtime ones. */
const demoConfig = (): string =>
  controllerConfigYaml({
    namespace: "nodemend-system",
    nodeSelector: "karpenter.sh/nodepool in (general,gpu)",
    leaseName: "nodemend-demo-1",
    metricsPort: 8080,
    cloudUrl: "http://127.0.0.1:4566"
  })

describe("shipped controller configs decode", () => {
  it("deploy/controller/configmap.yaml", () => {
    const cm = parseYaml(read("deploy/controller/configmap.yaml")) as { data: Record<string, string> }
    expectDecodes(parseYaml(cm.data["controller.yaml"]!), "configmap.yaml")
  })

  it("the Helm chart's config from its default values, for aws and for kwok", () => {
    const values = parseYaml(read("deploy/helm/nodemend/values.yaml")) as {
      controller: Record<string, unknown>
    }
    expectDecodes(chartConfig(values), "chart (aws)")
    const kwok = { ...values.controller, cloudProvider: "kwok", kwok: { replacementDelaySeconds: 5 } }
    expectDecodes(chartConfig({ controller: kwok }), "chart (kwok)")
  })

  it("the controller configs in docs/*.md", () => {
    const found = docsConfigs()
    expect(found.map(([f]) => f)).toEqual(
      expect.arrayContaining(["docs/aws.md", "docs/repair-controller.md"])
    )
    for (const [file, text] of found) expectDecodes(parseYaml(text), file)
  })

  it("the demo's (packages/demo/src/controllerConfig.mjs)", () => {
    const text = demoConfig()
    expect(text).toContain("cloudProvider: aws")
    expectDecodes(parseYaml(text), "demo controller.yaml")
  })

  it("the cluster tests' fixture (test/integration/helpers.ts testConfig), as written to a file", () => {
    const scenario = { tag: "t", pool: "t-pool", labels: {} }
    expectDecodes(testConfig("ns", scenario), "testConfig")
    expectDecodes(testConfig("ns", scenario, { dryRun: true, maxUnhealthyPercent: 30 }), "testConfig")
  })
})
