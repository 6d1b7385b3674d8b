// NVIDIA's "XID 144-150 Decode" (Blackwell NVLink 5) as data, the decode it prescribes, and the log rule that
// raises NvidiaNVLinkGPUResetRequired only for RESET_GPU rows. Lines are rendered from the documented format
// (the catalog's WORKFLOW_NVLINK5_ERR class) with register values taken from the table's own masks.
import { describe, expect, it } from "vitest"
import {
  decodeNvlink5,
  fitsMask,
  NVLINK5_DECODE,
  NVLINK5_DECODE_SOURCE,
  type Nvlink5DecodeRow
} from "../../src/rules/nvlink5-decode.ts"
import { compileRules, InvalidRule } from "../../src/rules/index.ts"

/** A register value that fits a mask, every `-` bit set to `fill`. */
const registerFor = (mask: string, fill: 0 | 1 = 0): number =>
  [...mask].reduce((v, c) => v * 2 + (c === "-" ? fill : Number(c)), 0)

const bucketOf = (xid: number, intrInfo: number, errorStatus: number) => {
  const d = decodeNvlink5(xid, intrInfo, errorStatus)
  return d._tag === "Decoded" ? d.immediate : "Undecoded"
}

describe("the XID 144-150 decode table", () => {
  it("names its source, retrieval date and revision; masks are 32 bits", () => {
    expect(NVLINK5_DECODE_SOURCE.url).toBe(
      "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
    )
    expect(NVLINK5_DECODE_SOURCE.retrieved).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(NVLINK5_DECODE_SOURCE.revision).toBeGreaterThan(0)
    expect(new Set(NVLINK5_DECODE.map((r) => r.xid))).toEqual(new Set([144, 145, 146, 147, 148, 149, 150]))
    for (const r of NVLINK5_DECODE) {
      expect(r.v1, r.subcode).toMatch(/^[-01]{32}$/)
      expect(r.v2, r.subcode).toMatch(/^[-01]{32}$/)
    }
  })

  it("every row decodes to its own bucket from a V1 and a V2 value, whatever the user-decode bits", () => {
    const status = (r: Nvlink5DecodeRow) => r.errorStatus ?? 0x1234
    for (const r of NVLINK5_DECODE)
      for (const m of [r.v1, r.v2])
        for (const fill of [0, 1] as const) {
          // the user-decode bits set may fit the promoted RLW_RXPIPE row (action 2), which the table allows
          if (fill === 1 && r.subcode === "RLW_RXPIPE") continue
          expect(bucketOf(r.xid, registerFor(m, fill), status(r)), `${r.xid} ${r.subcode} ${m}`).toBe(
            r.immediate
          )
        }
  })

  it("decodes the documented rows", () => {
    // 144 SAW_MVB (V2 subcode 1): 0x2 and 0x10 are GPU fatal, the rest non-fatal
    expect([1, 2, 4, 8, 0x10, 0x20].map((s) => bucketOf(144, 0x01, s))).toEqual([
      "IGNORE",
      "RESET_GPU",
      "IGNORE",
      "IGNORE",
      "RESET_GPU",
      "IGNORE"
    ])
    // 145 RLW_REMAP (V1 0010000010): XID_154_EVAL, then fatal 0x40
    expect(bucketOf(145, 0b0010000010, 0x1)).toBe("XID_154_EVAL")
    expect(bucketOf(145, 0b0010000010, 0x40)).toBe("RESET_GPU")
    // 145 RLW_RXPIPE: non-fatal, promoted to RESET_GPU by the decode for action 2 (V2 bit 7, V1 bit 10)
    expect(bucketOf(145, 0b00000110, 0x1)).toBe("IGNORE")
    expect(bucketOf(145, 0b10000110, 0x1)).toBe("RESET_GPU")
    expect(bucketOf(145, 0b10011000010, 0x4)).toBe("RESET_GPU")
    expect(bucketOf(145, 0b10000110, 0x8)).toBe("IGNORE") // 0x8 has no action 2
    // 149 NETIR_LINK_DOWN (V2 0010001): the link-down reason in bits 25:20 chooses
    const linkDown = (reason: number) => (reason << 20) | 0b0010001
    expect(bucketOf(149, linkDown(0b000001), 0)).toBe("RESET_GPU")
    expect(bucketOf(149, linkDown(0b100110), 0)).toBe("IGNORE")
    expect(bucketOf(149, linkDown(0b101000), 0)).toBe("IGNORE")
    expect(bucketOf(149, linkDown(0b000011), 0)).toBe("Undecoded") // not a row of the table
    // 149 NETIR_INT: any error status
    expect(bucketOf(149, 0b0011000, 0xdeadbeef)).toBe("RESET_GPU")
    // 150 MSE: degraded (0x0 / 0xFFFFFFFF) and watchdog
    expect(bucketOf(150, 0, 0xffffffff)).toBe("RESET_GPU")
    // a status the table does not list, or another XID's subcode: undecoded
    expect(bucketOf(144, 0x01, 0x40)).toBe("Undecoded")
    expect(bucketOf(147, 0x01, 0x2)).toBe("Undecoded")
  })

  it("fitsMask reads bit 31 first and skips `-`", () => {
    expect(fitsMask(0x80000001, `1${"-".repeat(30)}1`)).toBe(true)
    expect(fitsMask(0x00000001, `1${"-".repeat(30)}1`)).toBe(false)
    expect(fitsMask(0xffffffff, "-".repeat(32))).toBe(true)
  })
})

describe("the nvidia.nvlink5-reset-gpu rule", () => {
  const matcher = compileRules()
  const line = (xid: number, unit: string, intrInfo: string, errorStatus: string, prefix = "") =>
    `NVRM: Xid (PCI:0000:1b:00): ${xid}, ${prefix}${unit} Fatal <Crosscontain> <injected> <link> (${intrInfo} ${errorStatus} 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)`
  const reasons = (text: string) => matcher.match("dmesg", text).map((m) => m.reason)

  it("a RESET_GPU row raises the Condition alongside the XID's Warning, naming the GPU and the registers", () => {
    const text = line(149, "NETIR_LINK_DOWN", "0x00100011", "0x00000000", "pid='<unknown>', name=<unknown>, ")
    expect(reasons(text).sort()).toEqual(["NvidiaNVLinkGPUResetRequired", "NvidiaXID149Warning"])
    const m = matcher.match("dmesg", text).find((x) => x.reason === "NvidiaNVLinkGPUResetRequired")!
    expect([m.severity, m.subject, m.message]).toEqual([
      "Condition",
      "0000:1b:00",
      "GPU 0000:1b:00 needs a reset: XID 149 NETIR_LINK_DOWN Fatal <Crosscontain> <injected> <link> (intrInfo 0x00100011, errorStatus 0x00000000) decodes to RESET_GPU"
    ])
    expect(reasons(line(150, "MSE_WATCHDOG", "0x0", "0x0"))).toContain("NvidiaNVLinkGPUResetRequired")
  })

  it("IGNORE, XID_154_EVAL and rows the table lacks stay a Warning only", () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      [line(149, "NETIR_LINK_DOWN", "0x02600011", "0x00000000"), "NvidiaXID149Warning"], // link-down 100110: IGNORE
      [line(145, "RLW_REMAP", "0x00000004", "0x00000001"), "NvidiaXID145Warning"], // XID_154_EVAL: XID 154 decides
      [line(144, "SAW_MVB", "0x00000001", "0x00000040"), "NvidiaXID144Warning"], // no such error status
      [line(144, "SAW_MVB", "0x00000001", "0x123456789"), "NvidiaXID144Warning"] // not a 32-bit register
    ]
    for (const [text, warning] of cases) expect(reasons(text), text).toEqual([warning])
  })

  it("other XIDs never reach the decode", () => {
    const text = line(74, "NVLINK", "0x00000001", "0x00000002")
    expect(reasons(text)).toEqual(["NvidiaXID74Error"])
  })

  it("a rule naming an unknown decoder, or without the decoder's groups, is refused", () => {
    const base = {
      id: "mine",
      sources: ["dmesg"],
      reason: "NvidiaNVLinkGPUResetRequired",
      pattern: "Xid (?<code>\\d+) (?<intrInfo>\\S+) (?<errorStatus>\\S+) (?<pci>\\S+)"
    }
    expect(() => compileRules({ extraRules: [{ ...base, decoder: "nope" }] })).toThrow(InvalidRule)
    expect(() => compileRules({ extraRules: [{ ...base, decoder: "nope" }] })).toThrow(/no decoder "nope"/)
    expect(() =>
      compileRules({
        extraRules: [{ ...base, pattern: "Xid (?<code>\\d+)", decoder: "nvidia-nvlink5-reset-gpu" }]
      })
    ).toThrow(/needs a named group \(\?<intrInfo>/)
  })
})
