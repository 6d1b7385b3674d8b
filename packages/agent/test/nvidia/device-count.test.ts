import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { deviceCountMismatch } from "../../src/monitors/nvidia/device-count.ts"
import { countDeviceFiles, countNvidiaPciGpus } from "../../src/monitors/nvidia/host-devices.ts"
import { INSTANCE_GPU_COUNTS } from "../../src/monitors/nvidia/instance-gpu-counts.ts"

describe("device count", () => {
  it("all views agree: no mismatch", () => {
    expect(
      deviceCountMismatch({
        dcgm: 8,
        nvml: 8,
        deviceFiles: 8,
        pciDevices: 8,
        expected: { instanceType: "p5.48xlarge", count: 8 }
      })
    ).toBeUndefined()
  })
  it("7 of 8: DCGM vs device files and the instance type", () => {
    expect(
      deviceCountMismatch({ dcgm: 7, deviceFiles: 8, expected: { instanceType: "p4d.24xlarge", count: 8 } })
    ).toBe(
      "DCGM detected 7 GPUs but 8 nvidia device files were detected; expected 8 GPUs for p4d.24xlarge but only 7 were detected — possible hardware failure"
    )
  })
  it("a GPU that never enumerated: DCGM and /dev agree on 7, PCI shows 8", () => {
    expect(deviceCountMismatch({ dcgm: 7, deviceFiles: 7, pciDevices: 8 })).toBe(
      "DCGM detected 7 GPUs but 8 NVIDIA PCI devices are present"
    )
  })
  it("NVML only (no DCGM) and NVML/DCGM disagreement", () => {
    expect(deviceCountMismatch({ nvml: 4, deviceFiles: 4 })).toBeUndefined()
    expect(deviceCountMismatch({ nvml: 8, dcgm: 7, deviceFiles: 7 })).toBe(
      "NVML detected 8 GPUs but DCGM detected 7"
    )
  })
  it("no driver view at all: nothing to compare", () => {
    expect(deviceCountMismatch({ deviceFiles: 8 })).toBeUndefined()
  })
  it("the instance table knows the 8-GPU training instances", () => {
    for (const t of ["p4d.24xlarge", "p5.48xlarge", "p5en.48xlarge", "g5.48xlarge"])
      expect(INSTANCE_GPU_COUNTS.get(t)).toBe(8)
    expect(INSTANCE_GPU_COUNTS.get("g5.xlarge")).toBe(1)
  })
})

describe("host device views", () => {
  it("counts /dev/nvidia[0-9]* and display-class 0x10de PCI functions (not NVSwitch bridges)", async () => {
    const root = mkdtempSync(join(tmpdir(), "nodemend-host-"))
    mkdirSync(join(root, "dev"))
    for (const n of ["nvidia0", "nvidia1", "nvidia7", "nvidiactl", "nvidia-uvm", "nvidia-caps"])
      writeFileSync(join(root, "dev", n), "")
    const pci = join(root, "sys", "bus", "pci", "devices")
    const fn = (bdf: string, vendor: string, klass: string) => {
      mkdirSync(join(pci, bdf), { recursive: true })
      writeFileSync(join(pci, bdf, "vendor"), `${vendor}\n`)
      writeFileSync(join(pci, bdf, "class"), `${klass}\n`)
    }
    fn("0000:10:00.0", "0x10de", "0x030200") // 3D controller (H100)
    fn("0000:20:00.0", "0x10de", "0x030000") // VGA (T4 in some firmware)
    fn("0000:30:00.0", "0x10de", "0x068000") // NVSwitch bridge
    fn("0000:40:00.0", "0x1d0f", "0x020000") // ENA
    expect(await Effect.runPromise(countDeviceFiles(root))).toBe(3)
    expect(await Effect.runPromise(countNvidiaPciGpus(root))).toBe(2)
    expect(await Effect.runPromise(countNvidiaPciGpus(join(root, "nowhere")))).toBeUndefined()
    expect(await Effect.runPromise(countDeviceFiles(join(root, "nowhere")))).toBeUndefined()
  })
  it("a /dev without nvidiactl is not the host's: no device-file count, so no mismatch from it", async () => {
    const root = mkdtempSync(join(tmpdir(), "nodemend-host-"))
    mkdirSync(join(root, "dev"))
    writeFileSync(join(root, "dev", "null"), "")
    expect(await Effect.runPromise(countDeviceFiles(root))).toBeUndefined()
    expect(deviceCountMismatch({ dcgm: 8 })).toBeUndefined()
  })
})
