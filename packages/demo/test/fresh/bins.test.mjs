// The README's set-up in a fresh clone: `npm ci`, and nothing else (no `npm run build`, no dist/), then the
// workspace binaries as a user runs them: through npx, and straight from node_modules/.bin with the system's
// `node` first on PATH (it may be older than the Node 24 the sources need).
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const REPO = join(import.meta.dirname, "..", "..", "..", "..")
const clone = mkdtempSync(join(tmpdir(), "nodemend-fresh-"))
const systemPath = process.env.PATH.split(":")
  .filter((p) => !p.includes("node_modules"))
  .join(":")

beforeAll(() => {
  execFileSync("git", ["clone", "--quiet", "--no-local", REPO, clone], { stdio: "inherit" })
  execFileSync("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], {
    cwd: clone,
    stdio: "inherit"
  })
}, 600_000)
afterAll(() => rmSync(clone, { recursive: true, force: true }))

const run = (cmd, args, env = {}) =>
  spawnSync(cmd, args, { cwd: clone, encoding: "utf8", env: { ...process.env, ...env }, input: "" })

describe("workspace binaries right after npm ci", () => {
  it("nothing is built", () => {
    expect(existsSync(join(clone, "packages/agent/dist"))).toBe(false)
    expect(existsSync(join(clone, "packages/reason-codes/dist"))).toBe(false)
  })

  for (const [bin, usage] of [
    ["nodemend-agent", /usage: nodemend-agent --node-name NAME/],
    ["nodemend-controller", /Usage: nodemend-controller --config/],
    ["kubectl-nodemend", /kubectl nodemend/],
    ["nodemend", /usage: nodemend <command>/]
  ])
    it(`npx ${bin} --help, and node_modules/.bin/${bin} --help on the system's node`, () => {
      for (const r of [
        run("npx", [bin, "--help"]),
        run(join(clone, "node_modules/.bin", bin), ["--help"], { PATH: systemPath })
      ]) {
        expect(r.stderr + r.stdout).toMatch(usage)
        expect(r.status).toBe(0)
      }
    })

  it("nodemend-agent rules check classifies a kernel log line", () => {
    const check = spawnSync(
      join(clone, "node_modules/.bin/nodemend-agent"),
      ["rules", "check", "--source", "dmesg"],
      {
        cwd: clone,
        encoding: "utf8",
        env: { ...process.env, PATH: systemPath },
        input: "NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus.\n"
      }
    )
    expect(check.stdout + check.stderr).toContain("NvidiaXID79Error")
    expect(check.status).toBe(0)
  })
})
