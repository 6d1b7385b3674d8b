// The real nodemend-controller entry (sources, as the cli test runs them, and the shipped bundle) refuses a
// bad config at start: exit 1, every bad field named on stderr, nothing started (no kubeconfig is needed).
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { ensureBundle, writeConfig } from "../integration/controllerProcess.ts"

const PKG = fileURLToPath(new URL("../..", import.meta.url))
const NODE = join(PKG, "../../node_modules/.bin/node")

const BAD = {
  cloudProvider: "kwok",
  drain: { evictionBackoffInitialMs: 1.5 },
  policies: [{ conditionType: "DiskPressure", status: "False" }],
  aws: { subnets: [{ subnetId: "subnet-0a1", zone: "us-west-2a", zoneid: "usw2-az1" }] }
}

const run = (entry: ReadonlyArray<string>, config: string, region = "") =>
  spawnSync(NODE, [...entry, "--config", config, "--kubeconfig", "/nonexistent/kubeconfig"], {
    cwd: PKG,
    // No region from the environment unless asked: the placeholder case must name aws.region.
    env: { ...process.env, AWS_REGION: region, AWS_DEFAULT_REGION: "" },
    encoding: "utf8",
    timeout: 60_000
  })

describe.each([
  ["sources", () => ["--conditions=source", join(PKG, "src/main.ts")]],
  ["bundle", () => [ensureBundle()]]
])("nodemend-controller (%s) with a bad config", (_name, entry) => {
  it("exits 1 and names every bad field on stderr", () => {
    const path = writeConfig(BAD)
    const r = run(entry(), path)
    expect(r.status, r.stdout + r.stderr).toBe(1)
    expect(r.stderr).toContain(`nodemend-controller: invalid config ${path}: `)
    expect(r.stderr).toContain("drain.evictionBackoffInitialMs: Expected an integer")
    expect(r.stderr).toContain("policies[0].conditionType: DiskPressure is a kubelet-owned condition")
    expect(r.stderr).toContain("aws.subnets[0].zoneid: unknown key (did you mean zoneId?)")
    expect(r.stderr).not.toMatch(/\n\s+at /u)
    // Refused before anything started: the missing kubeconfig was never read.
    expect(r.stdout + r.stderr).not.toContain("/nonexistent/kubeconfig")
  }, 120_000)
})

it("cloudProvider aws with the aws section left a placeholder exits 1 naming aws.region, before anything starts", () => {
  const r = run(
    ["--conditions=source", join(PKG, "src/main.ts")],
    writeConfig({ cloudProvider: "aws", aws: {} })
  )
  expect(r.status, r.stdout + r.stderr).toBe(1)
  expect(r.stderr).toContain("aws.region: Missing key")
  expect(r.stdout + r.stderr).not.toContain("/nonexistent/kubeconfig")
})

it("the same file without its mistakes gets past the config (and stops at the missing kubeconfig)", () => {
  const good = writeConfig({ cloudProvider: "kwok", drain: { evictionBackoffInitialMs: 2 } })
  const r = run(["--conditions=source", join(PKG, "src/main.ts")], good)
  expect(r.status).not.toBe(0)
  expect(r.stdout + r.stderr).not.toContain("invalid config")
})

it("the shipped deploy/controller config starts where EKS puts the region in the environment (issue #15)", () => {
  const cm = parseYaml(readFileSync(join(PKG, "../../deploy/controller/configmap.yaml"), "utf8")) as {
    data: Record<string, string>
  }
  const shipped = join(mkdtempSync(join(tmpdir(), "shipped-")), "controller.yaml")
  writeFileSync(shipped, cm.data["controller.yaml"]!)
  const r = run(["--conditions=source", join(PKG, "src/main.ts")], shipped, "us-west-2")
  expect(r.stdout + r.stderr).not.toContain("invalid config")
  // It got as far as the kubeconfig (which this test does not give it).
  expect(r.stdout + r.stderr).toContain("/nonexistent/kubeconfig")
})
