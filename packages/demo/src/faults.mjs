/**
 * What `nodemend inject` can inject: each fault as its real source writes it, and the condition and reason
 * the agent turns it into (test/faults.test.mjs runs every log fault through the agent's rule engine and every
 * DCGM violation through the agent's decoder and violation findings).
 *
 * DCGM policy violations: a GPU node's agent loads the DCGM test double, which reads violations from a FIFO in
 * the node's host root (`run/nvidia-dcgm/policy-violations`, NMDOUBLE_DCGM_POLICY_FIFO) and pushes each through
 * the agent's registered policy callback from a thread of its own, as nv-hostengine does. The values are the
 * vendor-documented fixtures of the agent's tests (packages/agent/test/fixtures/dcgm-policy-violations.ts).
 */
import { join } from "node:path"
import { POLICY_VIOLATIONS } from "../../agent/test/fixtures/dcgm-policy-violations.ts"
import { POLICY_FIFO_IN_HOST, writePolicyViolation } from "../../dcgm-native/test/double/control.ts"
import { appendJournal, appendKmsg, appendLog } from "./host.mjs"

const IPAMD_LOG = "var/log/aws-routed-eni/ipamd.log"

const ipamdLine = (msg) =>
  JSON.stringify({ level: "error", ts: new Date().toISOString(), caller: "ipamd/ipamd.go:510", msg })

/** @typedef {{ source: "kmsg" } | { source: "journal", identifier: string } | { source: "file", path: string } | { source: "dcgm" }} Where */

const DCGM_NAMES = {
  DBE: "dcgm-dbe",
  PCI: "dcgm-pcie",
  MPR: "dcgm-retired-pages",
  THERMAL: "dcgm-thermal",
  POWER: "dcgm-power",
  NVLINK: "dcgm-nvlink",
  XID: "dcgm-xid"
}
const DCGM_SUMMARY = {
  DBE: "a double-bit ECC error (DCGM DBE policy violation)",
  PCI: "PCIe replays counted (DCGM PCIe policy violation; an Event, no condition)",
  MPR: "retired pages over the limit (DCGM page-retirement policy violation; an Event, no condition)",
  THERMAL: "GPU temperature over the limit (DCGM thermal policy violation; an Event, no condition)",
  POWER: "board power over the limit (DCGM power policy violation; an Event, no condition)",
  NVLINK: "NVLink CRC errors counted (DCGM NVLink policy violation)",
  XID: "an XID (DCGM XID policy violation)"
}

/** One fault per dcgmPolicyCondition_t bit, with the vendor-documented values of the agent's fixtures. */
const DCGM_FAULTS = POLICY_VIOLATIONS.map((v) => ({
  name: v.fire.condition === "XID" ? `${DCGM_NAMES.XID}${v.fire.errnum}` : DCGM_NAMES[v.fire.condition],
  summary:
    v.fire.condition === "XID"
      ? `XID ${v.fire.errnum} (DCGM XID policy violation)`
      : DCGM_SUMMARY[v.fire.condition],
  where: { source: "dcgm" },
  fire: v.fire,
  gpuOnly: true,
  conditionType: "AcceleratedHardwareReady",
  reason: v.reason,
  ...(v.severity === "Event" ? { event: true } : {})
}))

export const FAULTS = [
  {
    name: "xid79",
    summary: "a GPU falls off the bus (NVIDIA driver, kernel log)",
    where: { source: "kmsg" },
    lines: () => ["NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus."],
    conditionType: "AcceleratedHardwareReady",
    reason: "NvidiaXID79Error"
  },
  {
    name: "xid48",
    summary: "an uncorrectable double-bit ECC error in GPU memory (NVIDIA driver, kernel log)",
    where: { source: "kmsg" },
    lines: () => [
      "NVRM: Xid (PCI:0000:a8:00): 48, pid=24419, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0."
    ],
    conditionType: "AcceleratedHardwareReady",
    reason: "NvidiaXID48Error"
  },
  {
    name: "pids-exhausted",
    summary: "the kubelet cannot fork: the node is out of PIDs (kubelet, journal)",
    where: { source: "journal", identifier: "kubelet" },
    lines: () => [
      'E1201 10:12:01.512345    2051 kuberuntime_manager.go:1166] "Unhandled Error" err="failed to start container: fork/exec /usr/bin/runc: resource temporarily unavailable"'
    ],
    conditionType: "KernelReady",
    reason: "ForkFailedOutOfPIDs"
  },
  {
    name: "ipamd-no-token",
    summary: "the VPC CNI's ipamd cannot reach the API server without its token, three times (ipamd log)",
    where: { source: "file", path: IPAMD_LOG },
    lines: () =>
      Array.from({ length: 3 }, () =>
        ipamdLine(
          "Failed to check API server connectivity: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable"
        )
      ),
    conditionType: "NetworkingReady",
    reason: "IPAMDNotReady"
  },
  {
    name: "ipamd-ok",
    summary: "ipamd reaches the API server again: clears ipamd-no-token (ipamd log)",
    where: { source: "file", path: IPAMD_LOG },
    lines: () => [
      JSON.stringify({
        level: "info",
        ts: new Date().toISOString(),
        caller: "k8sapi/k8sutils.go:210",
        msg: "Successful communication with the Cluster! Cluster Version is: v1.37. git version: v1.37.2."
      })
    ],
    conditionType: "NetworkingReady",
    reason: "IPAMDNotReady",
    clears: true
  },
  ...DCGM_FAULTS
]

export const faultNamed = (name) => FAULTS.find((f) => f.name === name)

export const dcgmFifoOf = (root) => join(root, POLICY_FIFO_IN_HOST)

/**
 * Writes `fault` into the host at `root` the way its source writes it. A DCGM violation goes to the host's DCGM
 * double; it throws when no double reads it (not a GPU node, agent not running) or when no policy registration
 * took it (the agent is not connected to DCGM yet: DCGM drops such a violation, and so does the double).
 */
export const writeFault = (root, fault) => {
  if (fault.where.source === "dcgm") {
    const d = writePolicyViolation(dcgmFifoOf(root), fault.fire)
    if (d.delivered === undefined)
      throw new Error(`the DCGM double did not take the violation within 3 s (${dcgmFifoOf(root)}.log)`)
    if (d.delivered < 1)
      throw new Error(
        "the DCGM double dropped the violation: no policy registration for it (is the agent connected to DCGM yet?)"
      )
    return
  }
  for (const line of fault.lines()) {
    const w = fault.where
    if (w.source === "kmsg") appendKmsg(root, line)
    else if (w.source === "journal") appendJournal(root, w.identifier, line)
    else appendLog(root, w.path, line)
  }
}

export const describeWhere = (w) =>
  w.source === "kmsg"
    ? "dev/kmsg"
    : w.source === "journal"
      ? `journal (${w.identifier})`
      : w.source === "dcgm"
        ? `DCGM policy callback (${POLICY_FIFO_IN_HOST})`
        : w.path

/** What the agent should report, as `inject --list` and `inject` say it. */
export const describeOutcome = (f) =>
  f.clears
    ? `${f.conditionType} back to True`
    : f.event
      ? `Event ${f.reason} (no condition)`
      : `${f.conditionType}=False ${f.reason}`
