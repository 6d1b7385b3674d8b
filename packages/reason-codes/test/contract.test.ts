import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { CATALOG } from "../src/catalog.ts"
import type { CatalogEntry } from "../src/types.ts"
import { checkProblems, type Lock, makeLock, transitionProblems } from "../scripts/contract.ts"

const catalog = CATALOG as readonly CatalogEntry[]
const committedLock = JSON.parse(
  readFileSync(new URL("../api/catalog.lock.json", import.meta.url), "utf8")
) as Lock
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string
}
const changelog = readFileSync(new URL("../CHANGELOG.md", import.meta.url), "utf8")

const tamper = (f: (entries: CatalogEntry[]) => CatalogEntry[]) => f(catalog.map((e) => ({ ...e })))
const replaceEntry = (code: string, patch: Partial<CatalogEntry>) =>
  tamper((es) => es.map((e) => (e.code === code ? { ...e, ...patch } : e)))

describe("reason-code contract", () => {
  it("the committed lock matches the catalog and the package version", () => {
    expect(checkProblems(committedLock, catalog, pkg.version, changelog)).toEqual([])
    expect(committedLock.entries).toHaveLength(catalog.length)
  })

  it("rejects a renamed code", () => {
    const renamed = replaceEntry("SoftLockup", { code: "CpuSoftLockup" })
    const problems = checkProblems(committedLock, renamed, pkg.version, changelog)
    expect(problems.join("\n")).toMatch(/breaking change\(s\) need a major version bump/)
    expect(problems.join("\n")).toMatch(/SoftLockup: removed/)
  })

  it("rejects a removed code", () => {
    const removed = tamper((es) => es.filter((e) => e.code !== "IPAMDNoIPs"))
    expect(checkProblems(committedLock, removed, pkg.version, changelog).join("\n")).toMatch(
      /IPAMDNoIPs: removed/
    )
  })

  it("rejects a severity change", () => {
    const changed = replaceEntry("NvidiaDeviceCountMismatch", { severity: "Event" })
    expect(checkProblems(committedLock, changed, pkg.version, changelog).join("\n")).toMatch(
      /NvidiaDeviceCountMismatch: severity changed from "Condition" to "Event"/
    )
  })

  it("rejects a condition type change", () => {
    const changed = replaceEntry("BlockDeviceIOError", { conditionType: "KernelReady" })
    expect(checkProblems(committedLock, changed, pkg.version, changelog).join("\n")).toMatch(
      /BlockDeviceIOError: conditionType changed/
    )
  })

  it("rejects a template parameter change", () => {
    const changed = replaceEntry("NvidiaXID{code}Error", {
      parameters: [{ name: "code", type: "string", description: "x" }]
    })
    expect(checkProblems(committedLock, changed, pkg.version, changelog).join("\n")).toMatch(
      /NvidiaXID\{code\}Error: parameters changed/
    )
  })

  it("requires a minor bump for an addition, then a lock update", () => {
    const [maj, min, patch] = committedLock.version.split(".").map(Number) as [number, number, number]
    const nextPatch = `${maj}.${min}.${patch + 1}`
    const nextMinor = `${maj}.${min + 1}.0`
    const added = [...catalog, { ...catalog[0]!, code: "BrandNewReason" }]
    expect(checkProblems(committedLock, added, committedLock.version, changelog).join("\n")).toMatch(
      /need a minor version bump/
    )
    expect(checkProblems(committedLock, added, nextPatch, changelog).join("\n")).toMatch(
      /need a minor version bump/
    )
    expect(transitionProblems(committedLock, added, nextMinor, changelog)).toEqual([])
    // Bumped but the lock not regenerated: still red, with the instruction.
    expect(checkProblems(committedLock, added, nextMinor, changelog).join("\n")).toMatch(
      /run `npm run lock:update/
    )
    expect(checkProblems(makeLock(nextMinor, added), added, nextMinor, changelog)).toEqual([])
  })

  it("accepts a breaking change only with a major bump and a CHANGELOG entry naming the code", () => {
    const removed = tamper((es) => es.filter((e) => e.code !== "RapidCron"))
    expect(transitionProblems(committedLock, removed, "2.0.0", changelog).join("\n")).toMatch(
      /no "## 2.0.0" section/
    )
    const vague = `${changelog}\n## 2.0.0\n\n- cleanups\n`
    expect(transitionProblems(committedLock, removed, "2.0.0", vague).join("\n")).toMatch(
      /does not mention RapidCron/
    )
    const good = `# Changelog\n\n## 2.0.0\n\n- Removed RapidCron: it never matched real cron logs.\n\n${changelog}`
    expect(transitionProblems(committedLock, removed, "2.0.0", good)).toEqual([])
  })

  it("rejects a lock whose version differs from the package", () => {
    expect(
      checkProblems({ ...committedLock, version: "0.9.0" }, catalog, pkg.version, changelog).join("\n")
    ).toMatch(/records version 0.9.0/)
  })
})
