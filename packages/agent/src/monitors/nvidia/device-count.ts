/**
 * `NvidiaDeviceCountMismatch`: the GPUs the driver stack sees (NVML/DCGM) against the device files, the
 * NVIDIA display-class PCI functions and the instance type's promise. A GPU that never enumerated makes
 * DCGM and /dev agree on the wrong number, which only the PCI and instance-type views catch.
 */

export interface DeviceCounts {
  /** NVML's nvmlDeviceGetCount_v2, when NVML is loaded. */
  readonly nvml?: number
  /** DCGM's dcgmGetAllDevices, when connected. */
  readonly dcgm?: number
  /** `/dev/nvidia[0-9]*` device nodes, when the host's /dev is visible. */
  readonly deviceFiles?: number
  /** PCI functions of vendor 0x10de with a display-controller class (0x03xx) under /sys/bus/pci/devices. */
  readonly pciDevices?: number
  /** From the instance-type table for the node label `node.kubernetes.io/instance-type`. */
  readonly expected?: { readonly instanceType: string; readonly count: number }
}

/** The mismatch message, or undefined when every available view agrees. */
export const deviceCountMismatch = (c: DeviceCounts): string | undefined => {
  const [source, seen] =
    c.dcgm !== undefined ? ["DCGM", c.dcgm] : c.nvml !== undefined ? ["NVML", c.nvml] : []
  if (source === undefined || seen === undefined) return undefined
  const problems: string[] = []
  if (c.nvml !== undefined && c.dcgm !== undefined && c.nvml !== c.dcgm)
    problems.push(`NVML detected ${c.nvml} GPUs but DCGM detected ${c.dcgm}`)
  if (c.deviceFiles !== undefined && seen !== c.deviceFiles)
    problems.push(`${source} detected ${seen} GPUs but ${c.deviceFiles} nvidia device files were detected`)
  if (c.pciDevices !== undefined && seen < c.pciDevices)
    problems.push(`${source} detected ${seen} GPUs but ${c.pciDevices} NVIDIA PCI devices are present`)
  if (c.expected !== undefined && seen < c.expected.count)
    problems.push(
      `expected ${c.expected.count} GPUs for ${c.expected.instanceType} but only ${seen} were detected — possible hardware failure`
    )
  return problems.length === 0 ? undefined : problems.join("; ")
}
