// docs/operations.md against the code: its metrics reference lists exactly the metrics the agent and the
// controller declare, every metric name it mentions anywhere is one of them, and the commands it tells an
// on-call engineer to run are ones the binaries accept. The declarations are read from the sources; that they
// are served is checked by test/cluster/alertRules.test.ts for the ones the alerts use.
import { spawnSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"
import { documentedMetrics, OPERATIONS_DOC } from "../src/operationsDoc.ts"

const NODE = join(REPO_ROOT, "node_modules", ".bin", "node")
const doc = readFileSync(OPERATIONS_DOC, "utf8")

const tsFiles = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f))

/** `Metric.counter("name"` and friends in a package's sources; the controller's get its exposition prefix. */
const declared = (pkg: string, prefix: string): string[] =>
  tsFiles(join(REPO_ROOT, "packages", pkg, "src")).flatMap((f) =>
    [
      ...readFileSync(f, "utf8").matchAll(/Metric\.(?:counter|gauge|histogram|summary)\(\s*"([a-z_:]+)"/g)
    ].map((m) => `${prefix}${m[1]}`)
  )

const agentMetrics = declared("agent", "")
const controllerMetrics = declared("repair-controller", "nodemend_controller_")

const tableNames = (heading: string) => documentedMetrics(heading, doc).map((m) => m.name)

describe("docs/operations.md", () => {
  it("finds the declarations it compares against", () => {
    expect(agentMetrics).toContain("nodemend_agent_condition_writes_total")
    expect(controllerMetrics).toContain("nodemend_controller_breaker_open")
  })

  it("the controller metrics table lists exactly the controller's metrics", () => {
    expect(tableNames("Controller").sort()).toEqual([...new Set(controllerMetrics)].sort())
  })

  it("the agent metrics table lists exactly the agent's metrics", () => {
    expect(tableNames("Agent").sort()).toEqual([...new Set(agentMetrics)].sort())
  })

  it("every metric name in the text is declared (a recording rule's level:metric:operations name aside)", () => {
    const known = new Set([...agentMetrics, ...controllerMetrics])
    const mentioned = [...doc.matchAll(/(?<!:)\bnodemend_(?:agent|controller)_[a-z_]+(?![a-z_:])/g)].map(
      (m) => m[0]
    )
    expect(mentioned.filter((m) => !known.has(m))).toEqual([])
  })

  it("the kubectl nodemend subcommands it names are in the plugin's usage", () => {
    const usage = run("packages/kubectl-nodemend/src/main.ts", ["help"]).stdout
    expect(usage).toContain("kubectl nodemend")
    for (const sub of new Set([...doc.matchAll(/kubectl nodemend (\w+)/g)].map((m) => m[1]!)))
      expect(usage, sub).toContain(`kubectl nodemend ${sub}`)
  })

  it("its nodemend-agent rules check lines use flags the agent accepts, and the dmesg one works", () => {
    const usage = run("packages/agent/src/main.ts", ["rules", "check"]).stderr
    expect(usage).toContain("usage: nodemend-agent rules check")
    const lines = [...doc.matchAll(/nodemend-agent rules check ([^\n`|]*)/g)].map((m) => m[1]!)
    expect(lines.length).toBeGreaterThanOrEqual(3)
    for (const line of lines)
      for (const flag of line.match(/--[a-z-]+/g) ?? []) expect(usage, flag).toContain(flag)
    const r = run("packages/agent/src/main.ts", ["rules", "check", "--source", "dmesg"], {
      input: "[ 1234.5678] watchdog: BUG: soft lockup - CPU#6 stuck for 23s! [VM Thread:4054]\nall quiet\n"
    })
    expect(r.status).toBe(0)
    expect(r.stdout.trim().split("\n")).toEqual(["SoftLockup", "-"])
  })
})

/** A binary from its sources, as the packages' own tests run it. */
function run(main: string, args: ReadonlyArray<string>, opts: { input?: string } = {}) {
  const r = spawnSync(NODE, ["--conditions=source", join(REPO_ROOT, main), ...args], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    input: opts.input ?? "",
    timeout: 60_000
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}
