import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { whenDirectoryExists } from "../../src/sources/directory-appearance.ts"

const root = mkdtempSync(join(tmpdir(), "nodemend-appear-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe("whenDirectoryExists", () => {
  it("calls back at once for an existing directory", () => {
    let calls = 0
    whenDirectoryExists(root, () => calls++)
    expect(calls).toBe(1)
  })

  it("follows the path down as its components appear, ignoring unrelated entries, and calls back once", async () => {
    const target = join(root, "a", "b", "c")
    let calls = 0
    const waiting = whenDirectoryExists(target, () => calls++)
    writeFileSync(join(root, "unrelated.log"), "x")
    mkdirSync(join(root, "a"))
    mkdirSync(join(root, "a", "other"))
    mkdirSync(join(root, "a", "b"))
    expect(calls).toBe(0)
    mkdirSync(target)
    await waitFor("the callback", () => calls > 0, { timeoutMs: 10_000, intervalMs: 10 })
    mkdirSync(join(target, "d"))
    await new Promise((r) => setTimeout(r, 50))
    expect(calls).toBe(1)
    waiting.stop()
  })

  it("sees a whole path created at once (mkdir -p)", async () => {
    let calls = 0
    whenDirectoryExists(join(root, "p", "q", "r"), () => calls++)
    mkdirSync(join(root, "p", "q", "r"), { recursive: true })
    await waitFor("the callback", () => calls > 0, { timeoutMs: 10_000, intervalMs: 10 })
    expect(calls).toBe(1)
  })

  it("does not call back after stop", async () => {
    let calls = 0
    const waiting = whenDirectoryExists(join(root, "s"), () => calls++)
    waiting.stop()
    mkdirSync(join(root, "s"))
    await new Promise((r) => setTimeout(r, 100))
    expect(calls).toBe(0)
  })
})
