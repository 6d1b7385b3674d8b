import { describe, expect, it } from "vitest"
import {
  CATALOG,
  CONDITION_TYPES,
  CONDITION_TYPE_INFO,
  DEFAULT_REPAIR_POLICIES,
  FATAL_XIDS,
  entriesFor,
  formatCode,
  isFatalXid,
  isReasonCode,
  resolveReason,
  xidReason
} from "@nodemend/reason-codes"

// The exact reason strings of the EKS Node Monitoring Agent 1.7 (reference section 2), by condition type.
const NMA = {
  KernelReady: [
    "SoftLockup",
    "KernelBug",
    "AppCrash",
    "AppBlocked",
    "ConntrackExceededKernel",
    "ForkFailedOutOfPIDs",
    "ApproachingMaxOpenFiles",
    "ApproachingKernelPidMax",
    "ExcessiveZombieProcesses",
    "LargeEnvironment",
    "RapidCron",
    "ClockUnsynchronized",
    "ZramHighUsage"
  ],
  ContainerRuntimeReady: [
    "PodStuckTerminating",
    "KubeletFailed",
    "ContainerRuntimeFailed",
    "ReadinessProbeFailures",
    "LivenessProbeFailures",
    "ServiceFailedToStart",
    "{unit}RepeatedRestart",
    "DeprecatedContainerdConfiguration"
  ],
  NetworkingReady: [
    "IPAMDNotReady",
    "IPAMDRepeatedlyRestart",
    "IPAMDNoIPs",
    "IPAMDNotRunning",
    "IPAMDInconsistentState",
    "KubeProxyNotReady",
    "MissingIPRules",
    "MissingIPRoutes",
    "MissingDefaultRoutes",
    "UnexpectedRejectRule",
    "PortConflict",
    "InterfaceNotUp",
    "InterfaceNotRunning",
    "MissingLoopbackInterface",
    "NetworkSysctl",
    "MACAddressPolicyMisconfigured",
    "BandwidthInExceeded",
    "BandwidthOutExceeded",
    "ConntrackExceeded",
    "LinkLocalExceeded",
    "PPSExceeded",
    "EFAErrorMetric",
    "NPANotRunning",
    "NPARepeatedlyRestart",
    "NPABPFRecoveryError"
  ],
  StorageReady: [
    "EtcHostsMountFailed",
    "KubeletDiskUsageSlow",
    "BlockDeviceIOError",
    "XFSSmallAverageClusterSize",
    "IODelays",
    "EBSVolumeIOPSExceeded",
    "EBSVolumeThroughputExceeded",
    "EBSInstanceIOPSExceeded",
    "EBSInstanceThroughputExceeded"
  ],
  AcceleratedHardwareReady: [
    "DCGMError",
    "DCGMDiagnosticFailure",
    "DCGMHealthCode{code}",
    "DCGMFieldError{fieldId}",
    "FabricManagerNotRunning",
    "NvidiaFabricError",
    "NvidiaXID{code}Error",
    "NvidiaXID{code}Warning",
    "NvidiaDoubleBitError",
    "NvidiaNVLinkError",
    "NvidiaPageRetirement",
    "NvidiaPowerError",
    "NvidiaThermalError",
    "NvidiaPCIeError",
    "NvidiaDeviceCountMismatch",
    "NvidiaNCCLError",
    "NeuronSRAMUncorrectableError",
    "NeuronNCUncorrectableError",
    "NeuronHBMUncorrectableError",
    "NeuronDMAError"
  ]
} as const

// Codes nodemend added on top of NMA's catalog (never renamed NMA strings).
const NODEMEND_ADDITIONS: Partial<Record<keyof typeof NMA, readonly string[]>> = {
  // 1.4.0: node-problem-detector's kernel and filesystem rules (issue #27)
  KernelReady: [
    "OutOfMemoryKill",
    "UnregisterNetDeviceStuck",
    "HardwareErrorCorrected",
    "HardwareErrorCorrectedRepeatedly",
    "HardwareErrorRecoverable",
    "HardwareErrorFatal",
    "MemoryErrorCorrected",
    "MemoryErrorCorrectedRepeatedly",
    // 1.5.0: node-problem-detector's custom plugins and health checkers (issue #27)
    "ConntrackTableNearlyFull"
  ],
  // 1.5.0: node-problem-detector's health checkers (issue #27)
  ContainerRuntimeReady: ["KubeletUnhealthy", "ContainerRuntimeUnhealthy"],
  // 1.5.0: node-problem-detector's iptables-mode-monitor (issue #27)
  NetworkingReady: ["IPTablesVersionsMismatch"],
  StorageReady: [
    "Ext4FilesystemError",
    "Ext4FilesystemWarning",
    "XFSFilesystemShutdown",
    "FilesystemRemountedReadOnly"
  ],
  AcceleratedHardwareReady: [
    "NvidiaMonitorNotWatching",
    // 1.6.0: the driver's GPU recovery action (XID 154, issue #38)
    "NvidiaGPUResetRequired",
    "NvidiaNodeRebootRequired",
    "NvidiaGPUDrainAndResetRequired",
    "NvidiaGPUDrainP2PRequired",
    "NvidiaGPURecoveryActionOther",
    // 2.0.0: NVIDIA's XID 144-150 decode (Blackwell NVLink 5, issue #38)
    "NvidiaNVLinkGPUResetRequired"
  ]
}

// NMA "Fatal" reasons (they set the condition False), and nodemend's own Conditions; everything else is an Event.
const FATAL = new Set([
  "KubeletUnhealthy",
  "ContainerRuntimeUnhealthy",
  "UnregisterNetDeviceStuck",
  "HardwareErrorCorrectedRepeatedly",
  "HardwareErrorFatal",
  "MemoryErrorCorrectedRepeatedly",
  "XFSFilesystemShutdown",
  "FilesystemRemountedReadOnly",
  "ForkFailedOutOfPIDs",
  "PodStuckTerminating",
  "IPAMDNotReady",
  "IPAMDNotRunning",
  "InterfaceNotUp",
  "InterfaceNotRunning",
  "MissingLoopbackInterface",
  "NPANotRunning",
  "DCGMError",
  "DCGMDiagnosticFailure",
  "FabricManagerNotRunning",
  "NvidiaFabricError",
  "NvidiaXID{code}Error",
  "NvidiaDoubleBitError",
  "NvidiaNVLinkError",
  "NvidiaDeviceCountMismatch",
  "NvidiaGPUResetRequired",
  "NvidiaNodeRebootRequired",
  "NvidiaGPUDrainAndResetRequired",
  "NvidiaNVLinkGPUResetRequired",
  "NeuronSRAMUncorrectableError",
  "NeuronNCUncorrectableError",
  "NeuronHBMUncorrectableError",
  "NeuronDMAError"
])

describe("catalog", () => {
  it("has the 75 NMA entries (74 distinct codes plus ZramHighUsage) with the exact strings, plus our additions", () => {
    const codes = CATALOG.map((e) => e.code)
    expect(new Set(codes).size).toBe(codes.length)
    const nma = Object.values(NMA).flat()
    expect(nma).toHaveLength(75)
    for (const [type, expected] of Object.entries(NMA)) {
      const additions: readonly string[] = NODEMEND_ADDITIONS[type as keyof typeof NMA] ?? []
      const actual = entriesFor(type as keyof typeof NMA).map((e) => e.code)
      expect(actual.filter((c) => !additions.includes(c))).toEqual(expected)
      expect(actual.filter((c) => additions.includes(c))).toEqual(additions)
    }
    expect(CATALOG).toHaveLength(75 + Object.values(NODEMEND_ADDITIONS).flat().length)
  })

  it("dates nodemend's own additions after 1.0.0", () => {
    for (const code of Object.values(NODEMEND_ADDITIONS).flat())
      expect(CATALOG.find((e) => e.code === code)?.since).not.toBe("1.0.0")
  })

  it("has NMA's severities: Condition exactly for the fatal reasons", () => {
    for (const e of CATALOG)
      expect([e.code, e.severity]).toEqual([e.code, FATAL.has(e.code) ? "Condition" : "Event"])
  })

  it("defines every field of every entry", () => {
    for (const e of CATALOG) {
      expect(CONDITION_TYPES).toContain(e.conditionType)
      expect(e.description.length).toBeGreaterThan(10)
      expect(e.trigger.length).toBeGreaterThan(5)
      expect(e.message.length).toBeGreaterThan(0)
      expect(e.since).toMatch(/^\d+\.\d+\.\d+$/)
      expect(["auto", "reboot"]).toContain(e.recovery)
      expect(["Replace", "Reboot", "None"]).toContain(e.defaultAction)
      // Events never repair; templates declare each of their parameters.
      if (e.severity === "Event") expect(e.defaultAction).toBe("None")
      const placeholders = [...e.code.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
      expect((("parameters" in e ? e.parameters : undefined) ?? []).map((p) => p.name)).toEqual(placeholders)
    }
  })

  it("has the five condition types with their NMA ready reasons", () => {
    expect(CONDITION_TYPE_INFO.map((c) => [c.type, c.readyReason])).toEqual([
      ["KernelReady", "KernelIsReady"],
      ["ContainerRuntimeReady", "ContainerRuntimeIsReady"],
      ["NetworkingReady", "NetworkingIsReady"],
      ["StorageReady", "DiskIsReady"],
      ["AcceleratedHardwareReady", "NvidiaGPUIsReady"]
    ])
  })

  it("declares Karpenter's AWS repair policies", () => {
    const minutes = DEFAULT_REPAIR_POLICIES.map(
      (p) => `${p.conditionType}=${p.status}:${p.tolerationSeconds / 60}`
    )
    expect(minutes).toEqual([
      "Ready=False:30",
      "Ready=Unknown:30",
      "AcceleratedHardwareReady=False:10",
      "StorageReady=False:30",
      "NetworkingReady=False:30",
      "KernelReady=False:30",
      "ContainerRuntimeReady=False:30"
    ])
    for (const p of DEFAULT_REPAIR_POLICIES)
      expect(["DiskPressure", "MemoryPressure", "PIDPressure"]).not.toContain(p.conditionType)
  })
})

describe("lookup", () => {
  it("resolves exact codes and templates with typed parameters", () => {
    expect(resolveReason("SoftLockup")?.entry.conditionType).toBe("KernelReady")
    const xid = resolveReason("NvidiaXID79Error")
    expect(xid?.entry.code).toBe("NvidiaXID{code}Error")
    expect(xid?.parameters).toEqual({ code: 79 })
    expect(resolveReason("KubeletRepeatedRestart")?.parameters).toEqual({ unit: "Kubelet" })
    expect(resolveReason("Nvidia-PersistencedRepeatedRestart")?.entry.code).toBe("{unit}RepeatedRestart")
    expect(resolveReason("DCGMHealthCode122")?.parameters).toEqual({ code: 122 })
    expect(resolveReason("DCGMFieldError856")?.parameters).toEqual({ fieldId: 856 })
  })

  it("rejects near misses instead of guessing", () => {
    for (const bad of [
      "softlockup",
      "NvidiaXIDError",
      "NvidiaXID-1Error",
      "NvidiaXID07Error",
      "RepeatedRestart",
      "DCGMHealthCodex",
      " SoftLockup",
      ""
    ])
      expect([bad, resolveReason(bad)]).toEqual([bad, undefined])
    expect(isReasonCode("NvidiaXID13Warning")).toBe(true)
    expect(isReasonCode("MadeUp")).toBe(false)
  })

  it("maps XIDs to Error or Warning and refines the repair action per XID", () => {
    expect(xidReason(79)).toBe("NvidiaXID79Error")
    expect(xidReason(13)).toBe("NvidiaXID13Warning")
    expect(xidReason(31)).toBe("NvidiaXID31Warning")
    expect(isFatalXid(48)).toBe(true)
    expect(resolveReason("NvidiaXID48Error")?.defaultAction).toBe("Reboot")
    expect(resolveReason("NvidiaXID79Error")?.defaultAction).toBe("Reboot")
    expect(resolveReason("NvidiaXID54Error")?.defaultAction).toBe("Replace")
    expect(xidReason(63)).toBe("NvidiaXID63Warning")
    expect(resolveReason("NvidiaXID13Warning")?.defaultAction).toBe("None")
    expect(Object.keys(FATAL_XIDS).map(Number)).toEqual([
      46, 48, 54, 62, 64, 74, 79, 95, 109, 110, 119, 120, 136, 140, 142, 143, 151, 155, 156, 158
    ])
  })

  it("formats templates and refuses missing parameters", () => {
    expect(formatCode("NvidiaXID{code}Error", { code: 94 })).toBe("NvidiaXID94Error")
    expect(() => formatCode("{unit}RepeatedRestart")).toThrow(/missing parameter "unit"/)
  })
})
