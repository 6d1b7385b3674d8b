import { Result } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { buildChecks } from "../../src/checks/registry.ts"
import { parseConfigText } from "../../src/config/load.ts"
import { makeHostRoot } from "./host-root.ts"
import { recordedRunner } from "./recorded-runner.ts"

const config = (text: string) => {
  const r = parseConfigText(text, "c.yaml")
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

describe("check registry", () => {
  const host = makeHostRoot()
  afterAll(() => host.cleanup())
  const runner = recordedRunner(() => "missing")
  const names = (text: string) =>
    buildChecks(config(text), host.files, runner).map((c) => `${c.name}/${c.monitor}/${c.intervalMs}`)

  it("schedules ipamd-state, mac-address-policy and npa under networking every 5 min by default", () => {
    expect(names("")).toEqual(
      expect.arrayContaining([
        "ipamd-state/networking/300000",
        "mac-address-policy/networking/300000",
        "npa/networking/300000"
      ])
    )
  })

  it("per-check switches and intervals, and the monitor switch, apply to them", () => {
    const n = names("checks: { npa: { enabled: false }, ipamd-state: { intervalSeconds: 30 } }")
    expect(n).not.toContain("npa/networking/300000")
    expect(n).toContain("ipamd-state/networking/30000")
    expect(
      names("monitors: { networking: { enabled: false } }").filter((x) => x.includes("/networking/"))
    ).toEqual([])
  })
})
