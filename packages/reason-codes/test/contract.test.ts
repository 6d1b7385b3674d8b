import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import {
  type ContractSources,
  checkProblems,
  diff,
  type Lock,
  makeLock,
  transitionProblems
} from "../scripts/contract.ts"
import { SOURCES } from "../scripts/sources.ts"
import type { CatalogEntry } from "../src/types.ts"

const committed = JSON.parse(
  readFileSync(new URL("../api/catalog.lock.json", import.meta.url), "utf8")
) as Lock
const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  version: string
}
const changelog = readFileSync(new URL("../CHANGELOG.md", import.meta.url), "utf8")
const released = makeLock(pkg.version, SOURCES)

const tampered = (patch: Partial<ContractSources>, version = pkg.version) =>
  makeLock(version, { ...SOURCES, ...patch })
const withEntry = (code: string, patch: Partial<CatalogEntry>) =>
  tampered({ catalog: SOURCES.catalog.map((e) => (e.code === code ? { ...e, ...patch } : e)) })
const problemsOf = (current: Lock, log = changelog) => transitionProblems(released, current, log).join("\n")

describe("reason-code contract", () => {
  it("the committed lock is the current contract", () => {
    expect(
      checkProblems({ committed, current: makeLock(pkg.version, SOURCES), released: undefined, changelog })
    ).toEqual([])
  })

  it.each([
    ["a rename", withEntry("SoftLockup", { code: "CpuSoftLockup" }), /SoftLockup \(reason codes\): removed/],
    ["a severity change", withEntry("NvidiaDeviceCountMismatch", { severity: "Event" }), /severity changed/],
    [
      "a condition type change",
      withEntry("BlockDeviceIOError", { conditionType: "KernelReady" }),
      /conditionType/
    ],
    [
      "a message template change",
      withEntry("SoftLockup", { message: "CPU stuck {duration}" }),
      /message changed/
    ],
    [
      "a default action change",
      withEntry("NvidiaDoubleBitError", { defaultAction: "Reboot" }),
      /defaultAction/
    ],
    ["a recovery change", withEntry("NvidiaDoubleBitError", { recovery: "auto" }), /recovery/],
    [
      "a template parameter change",
      withEntry("NvidiaXID{code}Error", { parameters: [{ name: "code", type: "string", description: "x" }] }),
      /NvidiaXID\{code\}Error \(reason codes\): parameters changed/
    ],
    [
      "an XID added to the fatal list",
      tampered({ fatalXids: { ...SOURCES.fatalXids, 13: "Reboot" } }),
      /NvidiaXID13Error \(fatal XIDs\): added/
    ],
    [
      "a fatal XID's action changed",
      tampered({ fatalXids: { ...SOURCES.fatalXids, 79: "Replace" } }),
      /NvidiaXID79Error \(fatal XIDs\): defaultAction changed/
    ],
    [
      "a default policy's toleration changed",
      tampered({
        defaultRepairPolicies: SOURCES.defaultRepairPolicies.map((p) => ({ ...p, tolerationSeconds: 60 }))
      }),
      /AcceleratedHardwareReady=False \(default repair policies\): tolerationSeconds changed/
    ],
    [
      "a key renamed",
      tampered({
        keys: SOURCES.keys.map((k) =>
          k.key === "nodemend.io/repair" ? { ...k, key: "nodemend.io/repairing" } : k
        )
      }),
      /nodemend.io\/repair \(keys\): removed/
    ],
    [
      "a taint effect changed",
      tampered({
        keys: SOURCES.keys.map((k) => (k.key === "nodemend.io/repair" ? { ...k, effect: "NoExecute" } : k))
      }),
      /effect changed from "NoSchedule" to "NoExecute"/
    ],
    [
      "a ready reason changed",
      tampered({ neuronReady: { ...SOURCES.neuronReady, readyReason: "NeuronIsReady" } }),
      /NeuronAcceleratedHardwareIsReady \(ready reasons\): removed/
    ]
  ])("%s is breaking: refused without a major bump", (_, current, expected) => {
    const problems = problemsOf(current)
    expect(problems).toMatch(/breaking change\(s\) need a major version bump/)
    expect(problems).toMatch(expected)
  })

  it("an addition needs a minor bump and a CHANGELOG section naming it", () => {
    const added = (version: string) =>
      tampered({ catalog: [...SOURCES.catalog, { ...SOURCES.catalog[0]!, code: "BrandNewReason" }] }, version)
    const [maj, min, patch] = pkg.version.split(".").map(Number) as [number, number, number]
    expect(problemsOf(added(pkg.version))).toMatch(/addition\(s\) need a minor version bump/)
    expect(problemsOf(added(`${maj}.${min}.${patch + 1}`))).toMatch(/addition\(s\) need a minor version bump/)
    const next = `${maj}.${min + 1}.0`
    expect(problemsOf(added(next))).toMatch(`CHANGELOG.md has no "## ${next}" section`)
    expect(problemsOf(added(next), `## ${next}\n\n- more codes\n${changelog}`)).toMatch(
      /does not mention BrandNewReason/
    )
    expect(problemsOf(added(next), `## ${next}\n\n- Added BrandNewReason.\n${changelog}`)).toBe("")
  })

  it("a breaking change passes with a major bump and a CHANGELOG section naming every change", () => {
    const major = `${Number(pkg.version.split(".")[0]) + 1}.0.0`
    const removed = tampered(
      {
        catalog: SOURCES.catalog.filter((e) => e.code !== "RapidCron"),
        fatalXids: { ...SOURCES.fatalXids, 13: "Reboot" }
      },
      major
    )
    expect(problemsOf(removed, `## ${major}\n\n- Removed RapidCron.\n${changelog}`)).toMatch(
      /does not mention NvidiaXID13Error/
    )
    expect(
      problemsOf(removed, `## ${major}\n\n- Removed RapidCron; XID 13 is fatal: NvidiaXID13Error.\n`)
    ).toBe("")
  })

  it("a version may not go backwards", () => {
    expect(problemsOf(makeLock("0.9.0", SOURCES))).toMatch(/went backwards/)
  })

  it("a lock from before 1.2.0 is compared on what it records", () => {
    const old: Lock = {
      version: "1.1.0",
      entries: committed.entries.map(({ code, conditionType, severity, alsoEmittedAs, parameters }) => ({
        code,
        conditionType,
        severity,
        ...(alsoEmittedAs === undefined ? {} : { alsoEmittedAs }),
        parameters
      }))
    }
    expect(diff(old, released)).toEqual([])
    expect(diff(old, withEntry("SoftLockup", { severity: "Condition" })).map((c) => c.subject)).toEqual([
      "SoftLockup"
    ])
  })

  it("a committed lock that differs from the sources fails even when the version rules are met", () => {
    const next = tampered(
      { catalog: [...SOURCES.catalog, { ...SOURCES.catalog[0]!, code: "BrandNewReason" }] },
      "9.0.0"
    )
    const problems = checkProblems({ committed, current: next, released: undefined, changelog }).join("\n")
    expect(problems).toMatch(/api\/catalog.lock.json is not the current contract/)
    expect(problems).toMatch(/BrandNewReason \(reason codes\): added/)
  })
})
