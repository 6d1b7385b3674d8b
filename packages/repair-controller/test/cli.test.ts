import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { parseCli, USAGE } from "../src/cli.ts"

const PKG = fileURLToPath(new URL("..", import.meta.url))
const NODE = join(PKG, "../../node_modules/.bin/node")
const runBinary = (...args: string[]) =>
  spawnSync(NODE, ["--conditions=source", join(PKG, "src/main.ts"), ...args], {
    encoding: "utf8",
    timeout: 20_000
  })

describe("parseCli", () => {
  it("reads the flags", () => {
    expect(parseCli(["--config", "c.yaml", "--kubeconfig=k", "--identity", "me", "--port", "9090"])).toEqual({
      _tag: "Run",
      options: { config: "c.yaml", kubeconfig: "k", identity: "me", port: 9090 }
    })
  })
  it("--help and -h ask for usage, whatever else is given", () => {
    expect(parseCli(["--help"])._tag).toBe("Help")
    expect(parseCli(["-h", "--config", "x"])._tag).toBe("Help")
  })
  it("names an unknown flag, a stray argument, a missing --config and a bad port", () => {
    expect(parseCli(["--config", "c", "--bogus"])).toEqual({
      _tag: "Invalid",
      message: "Unknown option '--bogus'"
    })
    expect(parseCli(["--config", "c", "extra"])).toMatchObject({
      _tag: "Invalid",
      message: expect.stringContaining("'extra'")
    })
    expect(parseCli([])).toEqual({ _tag: "Invalid", message: "--config is required" })
    expect(parseCli(["--config", "c", "--port", "80x"])).toMatchObject({
      message: expect.stringContaining("'80x'")
    })
  })
})

describe("nodemend-controller binary", () => {
  it("--help prints usage on stdout and exits 0", () => {
    const r = runBinary("--help")
    expect(r.status).toBe(0)
    expect(r.stdout).toBe(USAGE)
    expect(r.stderr).toBe("")
  })
  it("an unknown flag exits 2 with the error and usage on stderr, no stack trace", () => {
    const r = runBinary("--nope")
    expect(r.status).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain("nodemend-controller: Unknown option '--nope'")
    expect(r.stderr).toContain("Usage: nodemend-controller")
    expect(r.stderr).not.toMatch(/TypeError|\n\s+at /)
  })
})
