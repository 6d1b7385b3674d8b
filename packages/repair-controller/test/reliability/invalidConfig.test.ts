/**
 * Every invalid config of both binaries, generated from their Schemas (schemaCases.ts): unknown key, wrong type,
 * bad enum, negative and zero numbers, for every field; plus an unreadable file and broken YAML.
 * - In process, the full matrix through each binary's own decoder: every case is rejected and the message names
 *   the field; the same file with a valid value there is accepted (so each case tests one field).
 * - The real binaries, run on a sample of cases (every kind and every top-level section; all cases with
 *   NODEMEND_RELIABILITY_LONG=1): exit non-zero (controller 1, agent 2), stderr names the field, no stack trace,
 *   and nothing started: the kubeconfig given (a missing file) was never read, no port was opened.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { CATALOG } from "@nodemend/reason-codes"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { stringify } from "yaml"
import { decodeConfig as decodeAgentConfig } from "../../../agent/src/config/load.ts"
import { AgentConfig } from "../../../agent/src/config/schema.ts"
import { decodeConfig as decodeControllerConfig } from "../../src/config/ConfigFile.ts"
import { ConfigFileSchema } from "../../src/config/ConfigFileSchema.ts"
import { LONG, recordFigures } from "./figures.ts"
import { type Case, fieldName, generateCases, type Path } from "./schemaCases.ts"

const PKG = fileURLToPath(new URL("../..", import.meta.url))
const NODE = join(PKG, "../../node_modules/.bin/node")
const AGENT_MAIN = join(PKG, "../agent/src/main.ts")
const CONTROLLER_MAIN = join(PKG, "src/main.ts")

const controllerCases = generateCases(ConfigFileSchema.ast, {
  strings: {
    conditionType: "KernelReady",
    status: "False",
    subnetId: "subnet-0a1",
    zone: "us-west-2a",
    region: "us-west-2"
  },
  recordKeys: { pools: "gpu-a", reasons: "ForkFailedOutOfPIDs", "aws.zoneIds": "usw2-az1" },
  numbers: { evictionBackoffMaxMs: 60_000, leaseDurationSeconds: 15 }
})
/** A catalog reason of each monitor: the agent accepts only those under `monitors.<m>.reasons`. */
const reasonKeys = Object.fromEntries(
  [...new Set(CATALOG.map((e) => e.monitor))].map((m) => [
    `monitors.${m}.reasons`,
    CATALOG.find((e) => e.monitor === m && !e.code.includes("{"))?.code ?? "sample"
  ])
)
const agentCases = generateCases(AgentConfig.ast, {
  strings: {
    allowedIPTablesChains: "filter/MY-CHAIN",
    destinationAllowlist: "s3://reliability-bucket/nodemend",
    sources: "dmesg",
    id: "reliability-rule",
    pattern: "reliability fault",
    reason: CATALOG.find((e) => e.monitor === "kernel" && !e.code.includes("{"))?.code ?? "sample"
  },
  recordKeys: { ...reasonKeys, checks: "open-files" }
})

const agentField = (path: Path) => path.map(String).join(".")

interface Binary {
  readonly name: string
  readonly cases: ReadonlyArray<Case>
  readonly decode: (config: unknown) => { ok: boolean; message: string }
  readonly field: (path: Path) => string
  readonly exitCode: number
  readonly argv: (configPath: string) => string[]
}

const binaries: ReadonlyArray<Binary> = [
  {
    name: "nodemend-controller",
    cases: controllerCases,
    decode: (c) => {
      const r = decodeControllerConfig(c)
      return Result.isSuccess(r) ? { ok: true, message: "" } : { ok: false, message: r.failure.message }
    },
    field: fieldName,
    exitCode: 1,
    argv: (p) => [
      "--conditions=source",
      CONTROLLER_MAIN,
      "--config",
      p,
      "--kubeconfig",
      "/nonexistent/kubeconfig"
    ]
  },
  {
    name: "nodemend-agent",
    cases: agentCases,
    decode: (c) => {
      const r = decodeAgentConfig(c)
      return Result.isSuccess(r) ? { ok: true, message: "" } : { ok: false, message: r.failure.message }
    },
    field: agentField,
    exitCode: 2,
    argv: (p) => [
      "--conditions=source",
      AGENT_MAIN,
      "--node-name",
      "reliability-node",
      "--kubeconfig",
      "/nonexistent/kubeconfig",
      "--host-root",
      "/nonexistent/host",
      "--config",
      p
    ]
  }
]

const writeFile = (content: string): string => {
  const dir = mkdtempSync(join(tmpdir(), "nodemend-badcfg-"))
  const path = join(dir, "config.yaml")
  writeFileSync(path, content)
  return path
}

const run = (argv: string[]) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const p = spawn(NODE, argv, { cwd: PKG, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    p.stdout.on("data", (d: Buffer) => {
      out += d.toString()
    })
    p.stderr.on("data", (d: Buffer) => {
      err += d.toString()
    })
    const timer = setTimeout(() => p.kill("SIGKILL"), 60_000)
    p.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, out, err })
    })
  })

/** Every kind at least once, then fields of other top-level sections, at most 10 cases; in a fixed order. */
const sampleOf = (cases: ReadonlyArray<Case>): Case[] => {
  const seen = new Set<string>()
  const byKind = cases.filter((c) => !seen.has(c.kind) && seen.add(c.kind) !== undefined)
  const sections = new Set(byKind.map((c) => String(c.path[0])))
  const more = cases.filter(
    (c) => !sections.has(String(c.path[0])) && sections.add(String(c.path[0])) !== undefined
  )
  return [...byKind, ...more].slice(0, 10)
}

describe.each(binaries)("$name: every generated invalid config", (b) => {
  it("the matrix covers every kind and many fields", () => {
    const kinds = new Set(b.cases.map((c) => c.kind))
    expect([...kinds].sort()).toEqual(["bad enum", "negative", "unknown key", "wrong type", "zero"])
    expect(b.cases.length).toBeGreaterThan(30)
    recordFigures(`invalid-config-${b.name}`, {
      cases: b.cases.length,
      kinds: Object.fromEntries([...kinds].map((k) => [k, b.cases.filter((c) => c.kind === k).length]))
    })
  })

  it("in process: each case rejected naming its field; the same file with a valid value accepted", () => {
    const wrong: string[] = []
    const noBase: string[] = []
    for (const c of b.cases) {
      const base = b.decode(c.base)
      // A field whose siblings need values this generator cannot make up (rules across fields): not a case.
      if (!base.ok) {
        noBase.push(`${b.field(c.path)}: ${base.message}`)
        continue
      }
      const bad = b.decode(c.config)
      if (bad.ok) wrong.push(`${c.kind} ${b.field(c.path)}: accepted ${JSON.stringify(c.config)}`)
      else if (!bad.message.includes(b.field(c.path)))
        wrong.push(`${c.kind} ${b.field(c.path)}: message does not name it: ${bad.message}`)
    }
    recordFigures(`invalid-config-in-process-${b.name}`, {
      cases: b.cases.length,
      checked: b.cases.length - noBase.length,
      noValidBase: noBase
    })
    expect(wrong).toEqual([])
    expect(noBase.length).toBeLessThanOrEqual(b.cases.length * 0.1)
  })

  it(
    "the binary: exits non-zero naming the field, nothing started",
    async () => {
      const cases = LONG ? b.cases : sampleOf(b.cases)
      const files: Array<{ label: string; path: string; field: string }> = cases.map((c) => ({
        label: `${c.kind} ${b.field(c.path)}`,
        path: writeFile(stringify(c.config)),
        field: b.field(c.path)
      }))
      // A directory where the file should be: unreadable even for root (a mode-000 file is not).
      const unreadable = mkdtempSync(join(tmpdir(), "nodemend-badcfg-dir-"))
      files.push({ label: "unreadable file", path: unreadable, field: unreadable })
      files.push({
        label: "missing file",
        path: "/nonexistent/config.yaml",
        field: "/nonexistent/config.yaml"
      })
      files.push({ label: "broken YAML", path: writeFile("drain: [unclosed\n"), field: "" })
      const wrong: string[] = []
      // Two at a time: the machine's two cores.
      for (let i = 0; i < files.length; i += 2) {
        const batch = files.slice(i, i + 2)
        const results = await Promise.all(batch.map((f) => run(b.argv(f.path))))
        for (const [j, r] of results.entries()) {
          const f = batch[j]!
          const all = r.out + r.err
          if (r.code === 0 || r.code === null) wrong.push(`${f.label}: exit ${r.code}`)
          else if (
            f.label.startsWith("unknown") ||
            f.label.startsWith("wrong") ||
            f.label.startsWith("bad") ||
            f.label.startsWith("negative") ||
            f.label.startsWith("zero")
          ) {
            if (r.code !== b.exitCode) wrong.push(`${f.label}: exit ${r.code}, wanted ${b.exitCode}`)
            if (!r.err.includes(f.field))
              wrong.push(`${f.label}: stderr does not name it: ${r.err.slice(0, 300)}`)
          } else if (f.field !== "" && !r.err.includes(f.field))
            wrong.push(`${f.label}: stderr does not name the file`)
          if (/\n\s+at /u.test(r.err)) wrong.push(`${f.label}: stack trace`)
          if (
            all.includes("/nonexistent/kubeconfig") ||
            /Listening on|acquired leadership|starting/i.test(r.out)
          )
            wrong.push(`${f.label}: started: ${all.slice(0, 300)}`)
        }
      }
      recordFigures(`invalid-config-binary-${b.name}`, { runs: files.length })
      expect(wrong).toEqual([])
    },
    LONG ? 3_600_000 : 300_000
  )
})
