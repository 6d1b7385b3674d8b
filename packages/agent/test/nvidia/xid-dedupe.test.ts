import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import type { Finding } from "../../src/model.ts"
import { XidDeduplicator, xidDedupedSink } from "../../src/monitors/nvidia/xid-deduplicator.ts"
import { xidDetection, xidOfReason } from "../../src/monitors/nvidia/findings.ts"
import {
  emptyXidDedupe,
  normalizePci,
  observeXid,
  XID_RETENTION_MS,
  type XidSighting
} from "../../src/monitors/nvidia/xid-dedupe.ts"

const run = (sightings: readonly XidSighting[]) => {
  let state = emptyXidDedupe
  return sightings.map((s) => {
    const r = observeXid(state, s)
    state = r.state
    return r.report
  })
}

describe("XID deduplication (callback vs kernel line vs NVML event)", () => {
  it("normalizes DCGM and kernel PCI addresses to one form", () => {
    expect(normalizePci("00000000:2A:00.0")).toBe("0000:2a:00")
    expect(normalizePci("0000:2a:00")).toBe("0000:2a:00")
    expect(normalizePci("PCI:0000:01:00")).toBe("0000:01:00")
    expect(normalizePci("gpu0")).toBeUndefined()
  })
  it("NVML's busId (8 upper-case domain digits), busIdLegacy and the kernel's %04x form are one GPU", () => {
    // nvml.h nvmlPciInfo_t: busId "%08X:%02X:%02X.0", busIdLegacy "%04X:%02X:%02X.0"; kernel: PCI:%04x:%02x:%02x
    const forms = ["00000000:3B:00.0", "0000:3B:00.0", "0000:3b:00", "PCI:0000:3b:00", " 00000000:3b:00 "]
    expect(new Set(forms.map(normalizePci))).toEqual(new Set(["0000:3b:00"]))
  })
  it("a domain above 0xffff keeps every digit (the kernel prints five), apart from domain 0", () => {
    expect(normalizePci("00010000:2A:00.0")).toBe("10000:2a:00")
    expect(normalizePci("PCI:10000:2a:00")).toBe("10000:2a:00")
    expect(normalizePci("00010000:2A:00.0")).not.toBe(normalizePci("00000000:2A:00.0"))
    expect(normalizePci("0001:2a:00")).toBe("0001:2a:00")
  })
  it("same XID on the same GPU within 5 s is one detection, whichever path is first", () => {
    expect(
      run([
        { xid: 79, pci: "0000:2a:00", atMs: 1000 },
        { xid: 79, pci: "0000:2a:00", atMs: 3000 },
        { xid: 79, pci: "0000:2a:00", atMs: 5999 }
      ])
    ).toEqual([true, false, false])
  })
  it("after 5 s it is a new detection", () => {
    expect(
      run([
        { xid: 79, pci: "0000:2a:00", atMs: 1000 },
        { xid: 79, pci: "0000:2a:00", atMs: 6000 }
      ])
    ).toEqual([true, true])
  })
  it("different XIDs or different GPUs are separate", () => {
    expect(
      run([
        { xid: 79, pci: "0000:2a:00", atMs: 1000 },
        { xid: 48, pci: "0000:2a:00", atMs: 1001 },
        { xid: 79, pci: "0000:3b:00", atMs: 1002 }
      ])
    ).toEqual([true, true, true])
  })
  it("an unnamed GPU matches on the XID number alone", () => {
    expect(
      run([
        { xid: 63, pci: undefined, atMs: 1000 },
        { xid: 63, pci: "0000:2a:00", atMs: 2000 }
      ])
    ).toEqual([true, false])
  })
  it("out-of-order arrival (kernel line older than the callback) is still a duplicate", () => {
    expect(
      run([
        { xid: 95, pci: "0000:2a:00", atMs: 5000 },
        { xid: 95, pci: "0000:2a:00", atMs: 3000 }
      ])
    ).toEqual([true, false])
  })
  it("a late report (the polled XID history) still meets the first one after other XIDs came in between", () => {
    expect(
      run([
        { xid: 79, pci: "0000:2a:00", atMs: 1000 }, // DCGM callback
        { xid: 13, pci: "0000:2a:00", atMs: 61_000 }, // another XID a minute later
        { xid: 79, pci: "0000:2a:00", atMs: 1000 } // the next poll reads XID 79 from the 5-minute history
      ])
    ).toEqual([true, true, false])
  })
  it("sightings older than the retention are forgotten, so memory stays bounded in time too", () => {
    let state = emptyXidDedupe
    for (const atMs of [0, XID_RETENTION_MS + 1])
      state = observeXid(state, { xid: 48, pci: undefined, atMs }).state
    expect(state.recent.map((s) => s.atMs)).toEqual([XID_RETENTION_MS + 1])
  })
  it("XID reasons follow the catalog's fatal list", () => {
    expect(xidDetection(79, 1, "0000:2a:00")).toMatchObject({
      reason: "NvidiaXID79Error",
      severity: "Condition"
    })
    expect(xidDetection(13, 1)).toMatchObject({ reason: "NvidiaXID13Warning", severity: "Event" })
    expect(xidOfReason("NvidiaXID79Error")).toBe(79)
    expect(xidOfReason("NvidiaXID13Warning")).toBe(13)
    expect(xidOfReason("NvidiaDoubleBitError")).toBeUndefined()
  })
})

describe("xidDedupedSink (the rules engine's kernel-line XIDs through the shared deduplicator)", () => {
  it("matches an NVML-format sighting against a kernel-format line of the same GPU, not another domain", async () => {
    const got: Finding[] = []
    const program = Effect.gen(function* () {
      const dedupe = yield* XidDeduplicator
      const sink = xidDedupedSink(dedupe, (fs) => Effect.sync(() => void got.push(...fs)))
      // NVML event path, busId as nvmlDeviceGetPciInfo_v3 fills it
      expect(yield* dedupe.admit({ xid: 79, pci: "00000000:3B:00.0", atMs: 1000 })).toBe(true)
      expect(yield* dedupe.admit({ xid: 79, pci: "00010000:3B:00.0", atMs: 1000 })).toBe(true)
      yield* sink([
        xidDetection(79, 2000, "0000:3b:00"), // NVRM: Xid (PCI:0000:3b:00): 79 -> the same GPU: dropped
        xidDetection(79, 2000, "0000:3c:00") // another bus: kept
      ])
    })
    await Effect.runPromise(program.pipe(Effect.provide(Layer.fresh(XidDeduplicator.layer))))
    expect(got.map((f) => f.subject)).toEqual(["0000:3c:00"])
  })

  it("drops a kernel-line XID the callback already reported; passes everything else", async () => {
    const got: Finding[] = []
    const program = Effect.gen(function* () {
      const dedupe = yield* XidDeduplicator
      const sink = xidDedupedSink(dedupe, (fs) => Effect.sync(() => void got.push(...fs)))
      yield* dedupe.admit({ xid: 79, pci: "0000:2a:00", atMs: 1000 }) // the DCGM callback saw it first
      yield* sink([
        xidDetection(79, 2500, "0000:2a:00"), // same XID, same GPU, 1.5 s later: dropped
        xidDetection(79, 2500, "0000:3b:00"), // another GPU: kept
        xidDetection(13, 2500, "0000:2a:00"), // another XID: kept
        {
          _tag: "Resolution",
          monitor: "kernel",
          reason: "SoftLockup",
          conditionType: "KernelReady",
          observedAtMs: 1
        }
      ])
    })
    await Effect.runPromise(program.pipe(Effect.provide(Layer.fresh(XidDeduplicator.layer))))
    expect(got.map((f) => `${f.reason}@${f.subject ?? ""}`)).toEqual([
      "NvidiaXID79Error@0000:3b:00",
      "NvidiaXID13Warning@0000:2a:00",
      "SoftLockup@"
    ])
  })
})
