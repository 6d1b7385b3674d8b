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

/**
 * Issue #38: one fault on the kernels of EKS AMIs is one detection, whatever the architecture or version; the other
 * lines the kernel prints for it (sequences rendered from the v5.15.100, v6.1.192 and v6.12.118 sources cited in
 * test/fixtures/log-lines-versions.ts) stay silent.
 */
describe("the kernels of EKS AMIs: one fault, one detection", () => {
  const ruleIds = (lines: readonly string[]) => {
    const engine = makeLogRuleEngine()
    return lines.map((text) => engine.matcher.match("dmesg", text).map((m) => `${m.reason} ${m.rule.id}`))
  }

  it("an arm64 NULL dereference (6.1): the Internal error: Oops line after it is the same oops", () => {
    expect(
      ruleIds([
        "Unable to handle kernel NULL pointer dereference at virtual address 0000000000000010",
        "Mem abort info:",
        "  ESR = 0x0000000096000005",
        "Internal error: Oops: 0000000096000005 [#1] PREEMPT SMP"
      ])
    ).toEqual([["KernelBug kernel.arm64-kernel-fault"], [], [], []])
  })

  it("an arm64 BUG() (6.12): kernel BUG at counts, Internal error: Oops - BUG does not", () => {
    expect(
      ruleIds([
        "kernel BUG at fs/xfs/xfs_inode.c:1234!",
        "Internal error: Oops - BUG: 00000000f2000800 [#1] PREEMPT SMP"
      ])
    ).toEqual([["KernelBug kernel.bug-at"], []])
  })

  it("an arm64 oops with no earlier line (5.15 %x, 6.12 %016lx ESR) is counted on its Internal error line", () => {
    expect(
      ruleIds([
        "Internal error: Oops - Undefined instruction: 0000000002000000 [#1] PREEMPT SMP",
        "Internal error: synchronous external abort: 96000210 [#2] SMP"
      ])
    ).toEqual([["KernelBug kernel.arm64-oops"], ["KernelBug kernel.arm64-oops"]])
  })

  it("an x86 NULL dereference (6.12): the Oops: Oops: line after it is the same oops", () => {
    expect(
      ruleIds([
        "BUG: kernel NULL pointer dereference, address: 0000000000000040",
        "#PF: supervisor read access in kernel mode",
        "Oops: Oops: 0000 [#1] PREEMPT SMP NOPTI"
      ])
    ).toEqual([["KernelBug kernel.bug"], [], []])
  })

  it("an XFS log I/O error (6.1, 6.12) is one shutdown of the device, on its one line", () => {
    const engine = makeLogRuleEngine()
    const lines = [
      "XFS (nvme1n1): log I/O error -5",
      "XFS (nvme1n1): Filesystem has been shut down due to log error (0x2).",
      "XFS (nvme1n1): Please unmount the filesystem and rectify the problem(s)."
    ]
    const hits = lines.flatMap((text) => engine.matcher.match("dmesg", text))
    expect(hits.map((h) => [h.reason, h.rule.id, h.subject])).toEqual([
      ["XFSFilesystemShutdown", "storage.xfs-log-shutdown", "nvme1n1"]
    ])
  })

  it("an XFS metadata I/O error (5.15-6.12) is one shutdown: only the detected-at line counts", () => {
    expect(
      ruleIds([
        "XFS (nvme2n1): Metadata I/O Error (0x1) detected at xfs_buf_ioend_handle_error+0x14a/0x3b0 [xfs] (fs/xfs/xfs_buf.c:1233).  Shutting down filesystem.",
        "XFS (nvme2n1): Please unmount the filesystem and rectify the problem(s)"
      ])
    ).toEqual([["XFSFilesystemShutdown storage.xfs-shutdown"], []])
  })
})
