/**
 * What `nodemend inject` can inject: each fault as its real source writes it, and the condition and reason
 * the agent's rules turn it into (test/faults.test.mjs runs every fault through the agent's rule engine).
 */
import { appendJournal, appendKmsg, appendLog } from "./host.mjs"

const IPAMD_LOG = "var/log/aws-routed-eni/ipamd.log"

const ipamdLine = (msg) =>
  JSON.stringify({ level: "error", ts: new Date().toISOString(), caller: "ipamd/ipamd.go:510", msg })

/** @typedef {{ source: "kmsg" } | { source: "journal", identifier: string } | { source: "file", path: string }} Where */

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
  }
]

export const faultNamed = (name) => FAULTS.find((f) => f.name === name)

/** Writes `fault` into the host at `root` the way its source writes it. */
export const writeFault = (root, fault) => {
  for (const line of fault.lines()) {
    const w = fault.where
    if (w.source === "kmsg") appendKmsg(root, line)
    else if (w.source === "journal") appendJournal(root, w.identifier, line)
    else appendLog(root, w.path, line)
  }
}

export const describeWhere = (w) =>
  w.source === "kmsg" ? "dev/kmsg" : w.source === "journal" ? `journal (${w.identifier})` : w.path
