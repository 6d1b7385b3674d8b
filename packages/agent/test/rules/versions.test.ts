/**
 * Issue #20, wordings across versions: the per-component blocks of test/fixtures/log-lines-versions.ts are only
 * tested because test/fixtures/all-log-lines.ts adds them to the lists rules.test.ts runs (fault, resolve and
 * benign lines, citations, prefilter soundness). This keeps a block from being added and silently left out.
 */
import { describe, expect, it } from "vitest"
import { makeLogRuleEngine } from "../../src/rules/index.ts"
import {
  ALL_BENIGN_LINES as BENIGN_LINES,
  ALL_FAULT_LINES as FAULT_LINES,
  ALL_RESOLVE_LINES as RESOLVE_LINES
} from "../fixtures/all-log-lines.ts"
import { VERSION_BLOCKS } from "../fixtures/log-lines-versions.ts"

describe("wordings across versions", () => {
  it("names each component once and says which versions it covers", () => {
    const names = VERSION_BLOCKS.map((b) => b.component)
    expect(new Set(names).size).toBe(names.length)
    for (const b of VERSION_BLOCKS) {
      expect(b.spread.length, b.component).toBeGreaterThan(20)
      expect(b.faults.length + b.resolves.length + b.benign.length, b.component).toBeGreaterThan(0)
    }
  })

  it("every line of every block is in the lists the fixture suites run", () => {
    for (const b of VERSION_BLOCKS) {
      for (const f of b.faults) expect(FAULT_LINES.includes(f), `${b.component}: ${f.text}`).toBe(true)
      for (const r of b.resolves) expect(RESOLVE_LINES.includes(r), `${b.component}: ${r.text}`).toBe(true)
      for (const l of b.benign) expect(BENIGN_LINES.includes(l), `${b.component}: ${l.text}`).toBe(true)
    }
  })

  it("a fault line of one block is not also a benign line elsewhere", () => {
    const benign = new Set(BENIGN_LINES.map((b) => `${b.source}\u0000${b.text}`))
    for (const f of FAULT_LINES) expect(benign.has(`${f.source}\u0000${f.text}`), f.text).toBe(false)
  })

  it("one NVMe controller failure is one detection: the reset attempts before the removal stay silent", () => {
    const engine = makeLogRuleEngine()
    const sequence = [
      "nvme nvme2: I/O 0 QID 0 timeout, reset controller",
      "nvme nvme2: Device not ready; aborting reset",
      "nvme nvme2: Device not ready; aborting reset",
      "nvme nvme2: Removing after probe failure status: -19"
    ]
    const reasons = sequence.map((text) => engine.matcher.match("dmesg", text).map((m) => m.reason))
    expect(reasons).toEqual([[], [], [], ["BlockDeviceIOError"]])
  })

  it("systemd 229 prints two lines for one kubelet failure; only one is a detection", () => {
    const engine = makeLogRuleEngine()
    const lines = [
      "kubelet.service: Main process exited, code=exited, status=255/n/a",
      "kubelet.service: Unit entered failed state.",
      "kubelet.service: Failed with result 'exit-code'."
    ]
    const hits = lines.flatMap((text) => engine.matcher.match("journal:systemd", text))
    expect(hits.map((h) => h.reason)).toEqual(["KubeletFailed"])
  })
})
