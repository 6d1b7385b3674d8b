import type { CatalogEntry, ConditionTypeInfo } from "./types.ts"

/**
 * Every reason code, kept byte-for-byte identical to the EKS Node Monitoring Agent 1.7 so that
 * automation keyed on those strings keeps working. Changing a code, severity, condition type or
 * template is a breaking change: `npm run check:contract` compares this list with api/catalog.lock.json.
 */

export const CONDITION_TYPE_INFO = [
  {
    type: "KernelReady",
    readyReason: "KernelIsReady",
    readyMessage: "Monitoring for the Kernel system is active",
    monitors: ["kernel"]
  },
  {
    type: "ContainerRuntimeReady",
    readyReason: "ContainerRuntimeIsReady",
    readyMessage: "Monitoring for the ContainerRuntime system is active",
    monitors: ["container-runtime"]
  },
  {
    type: "NetworkingReady",
    readyReason: "NetworkingIsReady",
    readyMessage: "Monitoring for the Networking system is active",
    monitors: ["networking"]
  },
  {
    type: "StorageReady",
    readyReason: "DiskIsReady",
    readyMessage: "Monitoring for the Disk system is active",
    monitors: ["storage"]
  },
  {
    type: "AcceleratedHardwareReady",
    readyReason: "NvidiaGPUIsReady",
    readyMessage: "Monitoring for the Nvidia GPU system is active",
    monitors: ["nvidia", "neuron"]
  }
] as const satisfies readonly ConditionTypeInfo[]

/** Ready reason used instead of `NvidiaGPUIsReady` when the accelerators are AWS Neuron devices. */
export const NEURON_READY = {
  readyReason: "NeuronAcceleratedHardwareIsReady",
  readyMessage: "Monitoring for the Neuron AcceleratedHardware system is active"
} as const

const V = "1.0.0"

export const CATALOG = [
  // ---------------------------------------------------------------- KernelReady
  {
    code: "SoftLockup",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "A CPU was stuck in kernel mode longer than the soft-lockup watchdog threshold.",
    trigger: "kernel log: `watchdog: BUG: soft lockup - CPU#N stuck for Xs!`",
    message: "CPU stuck for {duration}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "KernelBug",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "The kernel reported a BUG.",
    trigger: "kernel log: `BUG: ...` (not a soft lockup)",
    message: "A kernel bug was detected and reported by the Linux kernel",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "AppCrash",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "A process on the node crashed (trap or segfault).",
    trigger: "kernel log: `traps: NAME[PID] ...` or `NAME[PID]: segfault at ...`",
    message: 'Process "{name}" on the node has crashed',
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "AppBlocked",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "A task was blocked (hung task warning).",
    trigger: "kernel log: `task NAME:PID blocked for more than N seconds.`",
    message: 'Process "{name}" has been blocked from scheduling for a long period of time',
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "ConntrackExceededKernel",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "The kernel connection-tracking table is full and packets are dropped.",
    trigger: "kernel log: `nf_conntrack: table full, dropping packet`",
    message: "Connection tracking exceeded the maximum for the kernel",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "ForkFailedOutOfPIDs",
    conditionType: "KernelReady",
    severity: "Condition",
    monitor: "kernel",
    description: "fork/exec or thread creation failed because the node ran out of PIDs or memory.",
    trigger:
      "kubelet journal: `fork/exec ...: resource temporarily unavailable` or `failed to create new OS thread ... errno=11`",
    message: "A fork or exec call has failed due to the system being out of process IDs or memory",
    since: V,
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "ApproachingMaxOpenFiles",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "Allocated file handles are at or above 70% of fs.file-max.",
    trigger: "every 5 min: /proc/sys/fs/file-nr allocated / max >= 0.70",
    message: "Approaching Exhaustion of max open file descriptors. {allocated} of {max} total, {percent}%",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "ApproachingKernelPidMax",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "The number of processes is at or above 70% of the PID limit.",
    trigger: "every 5 min: count of /proc/[0-9]* / max(kernel.pid_max, kernel.threads-max) >= 0.70",
    message: "Approaching max number of PIDs. {current} of {max} total, {percent}%",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "ExcessiveZombieProcesses",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "Many zombie processes are not being reaped.",
    trigger: "every 5 min: >= 20 processes in state Z, seen on 5 checks",
    message: "Detected {count} zombie processes still running",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "LargeEnvironment",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "A process has more than 1000 environment variables.",
    trigger: "every 5 min: /proc/PID/environ entry count > 1000",
    message: "PID {pid} has a higher than normal environment variable count at {count}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "RapidCron",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "A cron job runs more often than every 5 minutes.",
    trigger: "cron log: the same job started twice within 5 minutes",
    message: "A cron job is running faster than every 5 minutes, which can impact node performance",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "ClockUnsynchronized",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "The kernel clock is not synchronized to any time source.",
    trigger:
      "every 5 min: adjtimex(2) maxerror >= 16 s, read as timedated's NTPSynchronized (the bound past which the kernel sets STA_UNSYNC)",
    message:
      "The kernel clock is not synchronized to any time source (STA_UNSYNC); time drift may break time-sensitive workloads",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "ZramHighUsage",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description: "A zram device holds more than 10% of its disk size.",
    trigger: "every 5 min: /sys/block/zram*/mm_stat orig_data_size / disksize > 0.10",
    message: "ZRAM device {device} at {percent}% capacity",
    since: V,
    recovery: "auto",
    defaultAction: "None",
    uncatalogedInNma: true
  },
  // nodemend 1.4.0: node-problem-detector v1.36's kernel-monitor rules that apply to an EKS node (issue #27).
  {
    code: "OutOfMemoryKill",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description:
      "The node ran out of memory and the kernel's OOM killer killed a process. A kill inside a pod's memory limit (`Memory cgroup out of memory`) is the pod's own limit, reported by kubelet as the container's OOMKilled, and is not this.",
    trigger:
      "kernel log: `Out of memory: Killed process PID (NAME) ...` (< 4.19: `Out of memory: Kill process PID (NAME) score N or sacrifice child`)",
    message: 'The node ran out of memory and the kernel killed process "{name}"',
    since: "1.4.0",
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "UnregisterNetDeviceStuck",
    conditionType: "KernelReady",
    severity: "Condition",
    monitor: "kernel",
    description:
      "A network device cannot be unregistered because something still holds a reference to it (a kernel reference leak). The kernel holds the RTNL lock while it waits, so creating and deleting pod network namespaces hangs; only a reboot releases it.",
    trigger:
      "kernel log: 3 x `unregister_netdevice: waiting for DEV to become free. Usage count = N` within 20 min (node-problem-detector's FrequentUnregisterNetDevice)",
    message:
      "Network device {device} is stuck unregistering (usage count {count}); pod networking setup and teardown hang",
    since: "1.4.0",
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "HardwareErrorCorrected",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description:
      "Firmware reported a hardware error that the hardware corrected (a UEFI CPER record through APEI/GHES): memory, processor or PCIe. One is harmless; a run of them predicts an uncorrectable one (HardwareErrorCorrectedRepeatedly).",
    trigger: "kernel log: `[Hardware Error]: event severity: corrected`",
    message: "The platform reported a corrected hardware error",
    since: "1.4.0",
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "HardwareErrorCorrectedRepeatedly",
    conditionType: "KernelReady",
    severity: "Condition",
    monitor: "kernel",
    description:
      "Firmware reported corrected hardware errors again and again: the part is degrading and an uncorrectable error is likely. The threshold is mcelog's default for a DIMM (10 corrected errors in 24 h).",
    trigger: "kernel log: 10 x `[Hardware Error]: event severity: corrected` within 24 h",
    message:
      "The platform keeps reporting corrected hardware errors (10 or more within 24 hours); the hardware is degrading",
    since: "1.4.0",
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "HardwareErrorRecoverable",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description:
      "Firmware reported an uncorrected hardware error that the kernel could contain (a UEFI CPER record of severity recoverable): the affected page or process was taken out, the node runs on.",
    trigger: "kernel log: `[Hardware Error]: event severity: recoverable`",
    message: "The platform reported an uncorrected, recoverable hardware error",
    since: "1.4.0",
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "HardwareErrorFatal",
    conditionType: "KernelReady",
    severity: "Condition",
    monitor: "kernel",
    description:
      "Firmware reported a fatal hardware error (a UEFI CPER record of severity fatal). Usually printed at boot from the BERT table: the previous boot ended in this error.",
    trigger: "kernel log: `[Hardware Error]: event severity: fatal`",
    message: "The platform reported a fatal hardware error",
    since: "1.4.0",
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "MemoryErrorCorrected",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description:
      "The memory controller corrected an ECC error (EDAC). One is harmless; a run of them on one DIMM predicts an uncorrectable one (MemoryErrorCorrectedRepeatedly).",
    trigger: "kernel log: `EDAC MCn: N CE ... on LOCATION (...)`",
    message: "Corrected memory error on {location} ({controller})",
    since: "1.4.0",
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "MemoryErrorCorrectedRepeatedly",
    conditionType: "KernelReady",
    severity: "Condition",
    monitor: "kernel",
    description:
      "One DIMM keeps producing corrected ECC errors: it is failing. The threshold is mcelog's default for a DIMM (10 corrected errors in 24 h).",
    trigger: "kernel log: 10 x `EDAC MCn: N CE ... on LOCATION` for the same location within 24 h",
    message:
      "Corrected memory errors keep recurring on {location} ({controller}): 10 or more within 24 hours; the DIMM is failing",
    since: "1.4.0",
    recovery: "reboot",
    defaultAction: "Replace"
  },
  // nodemend 1.5.0: node-problem-detector v1.36's custom-plugin and health-checker detections (issue #27).
  {
    code: "ConntrackTableNearlyFull",
    conditionType: "KernelReady",
    severity: "Event",
    monitor: "kernel",
    description:
      "The kernel connection-tracking table is 90% full or more: new connections will soon be dropped (ConntrackExceededKernel). node-problem-detector's network-problem-monitor ConntrackFull.",
    trigger: "`/proc/sys/net/netfilter/nf_conntrack_count` >= 90% of `nf_conntrack_max`",
    message: "Connection tracking table is {percent}% full ({count} of {max} entries)",
    since: "1.5.0",
    recovery: "auto",
    defaultAction: "None"
  },
  // ---------------------------------------------------------------- ContainerRuntimeReady
  {
    code: "PodStuckTerminating",
    conditionType: "ContainerRuntimeReady",
    severity: "Condition",
    monitor: "container-runtime",
    description: "A pod is stuck terminating because some of its containers never exited.",
    trigger:
      'kubelet journal (twice): `"Pod still has one or more containers in the non-exited state and will not be removed from desired state" pod="NS/NAME"`',
    message: 'Pod "{pod}" is stuck terminating. Restarting kubelet will result in cleaning up stuck pods',
    since: V,
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "KubeletFailed",
    conditionType: "ContainerRuntimeReady",
    severity: "Event",
    monitor: "container-runtime",
    description: "The kubelet systemd unit entered the failed state.",
    trigger:
      "systemd journal: `kubelet.service: Failed with result ...` / `Unit kubelet.service entered failed state`",
    message: "Kubelet has entered a failed state",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "ContainerRuntimeFailed",
    conditionType: "ContainerRuntimeReady",
    severity: "Event",
    monitor: "container-runtime",
    description: "The OCI runtime failed to create a container.",
    trigger: "kubelet journal: `OCI runtime create failed: ...`",
    message: "OCI runtime create failed",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "ReadinessProbeFailures",
    conditionType: "ContainerRuntimeReady",
    severity: "Event",
    monitor: "container-runtime",
    description: "Readiness probes fail faster than a safe rate.",
    trigger: "kubelet journal: readiness probe failures above 1/s sustained (burst 5)",
    message: "Exceeded a safe rate of readiness probe failures",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "LivenessProbeFailures",
    conditionType: "ContainerRuntimeReady",
    severity: "Event",
    monitor: "container-runtime",
    description: "Liveness probes fail faster than a safe rate.",
    trigger: "kubelet journal: liveness probe failures above 1/s sustained (burst 5)",
    message: "Exceeded a safe rate of liveness probe failures",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "ServiceFailedToStart",
    conditionType: "ContainerRuntimeReady",
    severity: "Event",
    monitor: "container-runtime",
    description: "A systemd unit failed to start.",
    trigger: "systemd journal: `Failed to start UNIT.`",
    message: "{line}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "{unit}RepeatedRestart",
    conditionType: "ContainerRuntimeReady",
    severity: "Event",
    monitor: "container-runtime",
    description: "A systemd service keeps restarting (NRestarts grew past 3).",
    trigger: "every 5 min: systemd NRestarts > 3 and greater than the previous sample",
    message: 'Systemd unit "{unitName}" has restarted (NRestarts {previous} -> {current})',
    since: V,
    recovery: "auto",
    defaultAction: "None",
    parameters: [
      {
        name: "unit",
        type: "string",
        description: "unit name without `.service`, title-cased (e.g. `Kubelet`, `Nvidia-Persistenced`)"
      }
    ]
  },
  {
    code: "DeprecatedContainerdConfiguration",
    conditionType: "ContainerRuntimeReady",
    severity: "Event",
    monitor: "container-runtime",
    description: "containerd reports use of a deprecated feature or configuration.",
    trigger: "every hour: `ctr deprecations list` entries seen within the last hour",
    message: "{id}: {message}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  // nodemend 1.5.0: node-problem-detector v1.36's health-checker-kubelet and health-checker-containerd (issue #27).
  {
    code: "KubeletUnhealthy",
    conditionType: "ContainerRuntimeReady",
    severity: "Condition",
    monitor: "container-runtime",
    description:
      "kubelet's health endpoint (`http://127.0.0.1:10248/healthz`) failed or did not answer on consecutive probes while the kubelet unit is meant to run. Clears when it answers `ok` again. node-problem-detector's health-checker-kubelet KubeletUnhealthy.",
    trigger: "3 consecutive failed `GET http://127.0.0.1:10248/healthz` probes (1 min apart)",
    message: "kubelet health check failed {failures} times in a row: {detail}",
    since: "1.5.0",
    recovery: "auto",
    defaultAction: "Replace"
  },
  {
    code: "ContainerRuntimeUnhealthy",
    conditionType: "ContainerRuntimeReady",
    severity: "Condition",
    monitor: "container-runtime",
    description:
      "The container runtime's CRI endpoint failed consecutive health probes: `Status` did not answer or reported RuntimeReady false, or `ListPodSandbox` (what `crictl pods` calls) failed. Clears when both answer again. node-problem-detector's health-checker-containerd ContainerRuntimeUnhealthy.",
    trigger: "3 consecutive failed CRI `Status` / `ListPodSandbox` probes (1 min apart)",
    message: "Container runtime health check failed {failures} times in a row: {detail}",
    since: "1.5.0",
    recovery: "auto",
    defaultAction: "Replace"
  },
  // ---------------------------------------------------------------- NetworkingReady
  {
    code: "IPAMDNotReady",
    conditionType: "NetworkingReady",
    severity: "Condition",
    monitor: "networking",
    description: "The VPC CNI IPAM daemon cannot reach the API server.",
    trigger: "ipamd.log: `Unable to reach API Server` / `Failed to check API server connectivity`",
    message:
      "IPAM-D has failed to connect to API Server which could be an issue with IPTable rules or any other network configuration.",
    since: V,
    recovery: "auto",
    defaultAction: "Replace"
  },
  {
    code: "IPAMDRepeatedlyRestart",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "IPAMD restarted repeatedly.",
    trigger: "ipamd.log: `Starting L-IPAMD` 5 times",
    message: "IPAMD is restarting often which leads to other CNI components failing.",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "IPAMDNoIPs",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "The subnet has no free addresses for pods.",
    trigger: "ipamd.log: `InsufficientFreeAddressesInSubnet`",
    message: "There are no available IP addresses for IPAMD to assign to pods",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "IPAMDNotRunning",
    conditionType: "NetworkingReady",
    severity: "Condition",
    monitor: "networking",
    description: "The VPC CNI is installed on the node but IPAMD is not running.",
    trigger: "every 5 min: VPC CNI detected and no `aws-k8s-agent` process on two consecutive checks",
    message: "The AWS VPC CNI was detected on this node but IPAMD was not found running",
    since: V,
    recovery: "auto",
    defaultAction: "Replace"
  },
  {
    code: "IPAMDInconsistentState",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "The IPAMD checkpoint disagrees with the pod sandbox IPs reported by the runtime.",
    trigger: "every 5 min: ipam.json allocation IP != CRI PodSandboxStatus IP",
    message: "Internal IPAMD state has conflicting IP addresses for pod {namespace}/{name}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "KubeProxyNotReady",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "kube-proxy cannot watch or list resources.",
    trigger:
      "kube-proxy log: `Failed to watch ...: failed to list ...: the server could not find the requested resource`",
    message:
      "Kube Proxy has failed to watch or list resources, which may impact pod to service communication.",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "MissingIPRules",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "A pod IP assigned by IPAMD has no policy-routing rule.",
    trigger: "every 5 min: IPAMD ENI IPs vs `ip rule`",
    message: "Pod IP {ip} is missing {prefix}rules: Expected entry like `from all to {ip} lookup main`",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "MissingIPRoutes",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "A pod IP assigned by IPAMD has no route.",
    trigger: "every 5 min: IPAMD ENI IPs vs `ip route show table all`",
    message: "Pod IP {ip} is missing {prefix}routes: Expected entry like `{ip} dev <dev> scope link`",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "MissingDefaultRoutes",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "A secondary-ENI route table has no default route.",
    trigger: "every 5 min: tables referenced by 1536 rules lack `default via`",
    message:
      "Missing default route rules for table {table}: Expected entry like `default via <gateway-ip> dev <dev> table {table}`",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "UnexpectedRejectRule",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "An iptables REJECT/DROP rule outside the known Kubernetes/CNI chains.",
    trigger: "every 5 min: iptables-save / ip6tables-save, minus the allowlist",
    message: 'Found an unexpected iptables reject rule: "{rule}"',
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "PortConflict",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "An iptables DNAT rule captures the kubelet port.",
    trigger: "every 5 min: iptables rule with `--dport 10250 -j DNAT`",
    message: "Potential iptables rule conflict on port {port}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "InterfaceNotUp",
    conditionType: "NetworkingReady",
    severity: "Condition",
    monitor: "networking",
    description: "A network interface is administratively down.",
    trigger: "periodic: interface lacks IFF_UP on two consecutive samples (excluded names skipped)",
    message: 'Interface Name: "{name}", MAC: "{mac}" is not up',
    since: V,
    recovery: "auto",
    defaultAction: "Replace"
  },
  {
    code: "InterfaceNotRunning",
    conditionType: "NetworkingReady",
    severity: "Condition",
    monitor: "networking",
    description: "A network interface has no carrier (not RUNNING).",
    trigger: "periodic: interface lacks IFF_RUNNING on two consecutive samples (excluded names skipped)",
    message: 'Interface Name: "{name}", MAC: "{mac}" is not up',
    since: V,
    recovery: "auto",
    defaultAction: "Replace"
  },
  {
    code: "MissingLoopbackInterface",
    conditionType: "NetworkingReady",
    severity: "Condition",
    monitor: "networking",
    description: "No loopback interface exists.",
    trigger: "periodic: no interface with IFF_LOOPBACK",
    message:
      "The loopback interface is missing from this instance. Without it, many services which depend on local connectivity will fail",
    since: V,
    recovery: "auto",
    defaultAction: "Replace"
  },
  {
    code: "NetworkSysctl",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "A networking sysctl is misconfigured (net.ipv4.ip_forward != 1).",
    trigger: "every 5 min: /proc/sys/net/ipv4/ip_forward",
    message: "A network related sysctl parameter may be misconfigured",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "MACAddressPolicyMisconfigured",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "systemd-networkd link files set MACAddressPolicy to something other than none.",
    trigger: "every 5 min: effective MACAddressPolicy of each .link file",
    message:
      "MACAddressPolicy in {file} is set to \"{value}\" instead of 'none', which may cause network issues",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "BandwidthInExceeded",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description:
      "Inbound packets were queued or dropped because the instance exceeded its inbound bandwidth.",
    trigger: "ENA stat bw_in_allowance_exceeded grew faster than its budget",
    message: '{stat} increased on interface "{interface}" from {old} to {new}',
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "BandwidthOutExceeded",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description:
      "Outbound packets were queued or dropped because the instance exceeded its outbound bandwidth.",
    trigger: "ENA stat bw_out_allowance_exceeded grew faster than its budget",
    message: '{stat} increased on interface "{interface}" from {old} to {new}',
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "ConntrackExceeded",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "Packets were dropped because the instance exceeded its connection-tracking allowance.",
    trigger: "ENA stat conntrack_allowance_exceeded grew faster than its budget",
    message: '{stat} increased on interface "{interface}" from {old} to {new}',
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "LinkLocalExceeded",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "Packets to link-local services (DNS, IMDS, NTP) were dropped over the PPS allowance.",
    trigger: "ENA stat linklocal_allowance_exceeded grew faster than its budget",
    message: '{stat} increased on interface "{interface}" from {old} to {new}',
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "PPSExceeded",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "Packets were queued or dropped because the instance exceeded its PPS allowance.",
    trigger: "ENA stat pps_allowance_exceeded grew faster than its budget",
    message: '{stat} increased on interface "{interface}" from {old} to {new}',
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "EFAErrorMetric",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "An EFA hardware error counter grew faster than its budget.",
    trigger: "every minute: /sys/class/infiniband/*/ports/*/hw_counters deltas",
    message: "{counter} increased from {old} to {new} for device:port [{device}:{port}]",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "NPANotRunning",
    conditionType: "NetworkingReady",
    severity: "Condition",
    monitor: "networking",
    description: "The network policy agent has not been active for 15 minutes (EKS Auto Mode).",
    trigger: "every 5 min: aws-network-policy-agent.service not active for >= 15 min",
    message: 'NPA is not running on this Auto Mode node (SubState="{subState}", Result="{result}")',
    since: V,
    recovery: "auto",
    defaultAction: "Replace"
  },
  {
    code: "NPARepeatedlyRestart",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "The network policy agent restarted 5 or more times in one poll interval.",
    trigger: "every 5 min: NRestarts delta >= 5",
    message:
      'NPA restarted {delta} times in last poll interval (threshold: 5, SubState="{subState}", Result="{result}")',
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "NPABPFRecoveryError",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description: "The network policy agent failed to recover its eBPF state or maps.",
    trigger: "NPA log: BPF state/map recovery errors, twice",
    message: "NPA BPF state recovery failed after restart",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  // nodemend 1.5.0: node-problem-detector v1.36's iptables-mode-monitor (issue #27).
  {
    code: "IPTablesVersionsMismatch",
    conditionType: "NetworkingReady",
    severity: "Event",
    monitor: "networking",
    description:
      "The node has iptables rules in both the legacy (iptables API) and the nft (nftables) backends of iptables 1.8+: kube-proxy, the CNI and the host's tools disagree on the mode, and rules of one backend do not see the other's. node-problem-detector's IPTablesVersionsMismatch (same reason string).",
    trigger:
      "`ip[6]tables-legacy-save` and `ip[6]tables-nft-save` both print rule lines (lines starting with `-`)",
    message: "Found rules from both versions, iptables-legacy: {legacy} iptables-nft: {nft}",
    since: "1.5.0",
    recovery: "auto",
    defaultAction: "None"
  },
  // ---------------------------------------------------------------- StorageReady
  {
    code: "EtcHostsMountFailed",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description: "The kubelet-generated /etc/hosts could not be mounted into a container.",
    trigger: "/var/log/messages: `error mounting ...etc-hosts... to rootfs .../etc/hosts`",
    message: "Mounting of the kubelet generated /etc/hosts failed",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "KubeletDiskUsageSlow",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description: "The kubelet's disk usage scan is slow.",
    trigger: "kubelet journal: `fs: disk usage and inodes count on following dirs took ...`",
    message:
      "Kubelet is reporting slow disk usage, which may indicate a misconfigured filesystem or insufficient disk I/O",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "BlockDeviceIOError",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description: "The kernel reported an I/O error on a block device.",
    trigger:
      "kernel log: `I/O error, dev X, sector N` (all kernel wordings) or `Buffer I/O error on device X`",
    message:
      "I/O error detected on block device {device} at {location}, indicating a failed physical drive or EBS volume",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "XFSSmallAverageClusterSize",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description: "An XFS filesystem's free space is fragmented (average free extent < 16 blocks).",
    trigger: 'every 10 min: `xfs_db -r -c "freesp -s"` average free extent size < 16',
    message:
      "The XFS Average Cluster size is small, which may prevent new files from being created due to free space fragmentation",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "IODelays",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description: "A process spent 10 s or more waiting for block I/O within one interval.",
    trigger: "every 10 min: /proc/PID/stat delayacct_blkio_ticks delta >= 10 s",
    message: "Process {comm} (PID {pid}) incurred {seconds} seconds of I/O delay",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "EBSVolumeIOPSExceeded",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description: "An EBS volume exceeded its provisioned IOPS.",
    trigger: "every 10 min: NVMe log page 0xD0 EbsVolumePerformanceExceededIops delta > 50 s",
    message: "Volume {volume} ({device}) reported exceeded configured IOPS for {duration}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "EBSVolumeThroughputExceeded",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description: "An EBS volume exceeded its provisioned throughput.",
    trigger: "every 10 min: NVMe log page 0xD0 EbsVolumePerformanceExceededTp delta > 50 s",
    message: "Volume {volume} ({device}) reported exceeded configured throughput for {duration}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "EBSInstanceIOPSExceeded",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description: "The instance exceeded its EBS IOPS limit.",
    trigger: "every 10 min: NVMe log page 0xD0 Ec2InstanceEbsPerformanceExceededIops delta > 50 s",
    message: "Volume {volume} ({device}) reported exceeded instance IOPS for {duration}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "EBSInstanceThroughputExceeded",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description: "The instance exceeded its EBS throughput limit.",
    trigger: "every 10 min: NVMe log page 0xD0 Ec2InstanceEbsPerformanceExceededTp delta > 50 s",
    message: "Volume {volume} ({device}) reported exceeded instance throughput for {duration}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  // nodemend 1.4.0: node-problem-detector v1.36's filesystem rules (kernel-monitor, readonly-monitor; issue #27).
  {
    code: "Ext4FilesystemError",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description: "ext4 found an inconsistency or an I/O failure in a filesystem's metadata.",
    trigger: "kernel log: `EXT4-fs error (device DEV): ...` or `EXT4-fs error (device DEV) in ...`",
    message: "ext4 error on {device}: {detail}",
    since: "1.4.0",
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "Ext4FilesystemWarning",
    conditionType: "StorageReady",
    severity: "Event",
    monitor: "storage",
    description:
      "ext4 warned about a filesystem (a directory index full, an unreadable directory block, ...).",
    trigger: "kernel log: `EXT4-fs warning (device DEV): ...`",
    message: "ext4 warning on {device}: {detail}",
    since: "1.4.0",
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "XFSFilesystemShutdown",
    conditionType: "StorageReady",
    severity: "Condition",
    monitor: "storage",
    description:
      "XFS shut a filesystem down after corruption or a log I/O error: every further I/O on it fails until it is unmounted and repaired, which for /var or / means a reboot.",
    trigger: "kernel log: `XFS (DEV): ... Shutting down filesystem`",
    message: "XFS shut down the filesystem on {device}: {why}",
    since: "1.4.0",
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "FilesystemRemountedReadOnly",
    conditionType: "StorageReady",
    severity: "Condition",
    monitor: "storage",
    description:
      "The kernel remounted a filesystem read-only after an error (ext4/ext3 `errors=remount-ro`): writes to it fail until it is checked and remounted.",
    trigger: "kernel log: `EXT4-fs (DEV): Remounting filesystem read-only`",
    message: "The filesystem on {device} was remounted read-only after an error",
    since: "1.4.0",
    recovery: "reboot",
    defaultAction: "Replace"
  },
  // ---------------------------------------------------------------- AcceleratedHardwareReady (NVIDIA)
  {
    code: "DCGMError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description: "The agent cannot talk to DCGM (connect, register policies, watches) after a grace period.",
    trigger: "DCGM connection/registration failing longer than the grace period",
    message: "{error}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "DCGMDiagnosticFailure",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description: "A DCGM diagnostic software test failed (only when diagnostics are enabled).",
    trigger: "every 5 min when DCGM diag level > 0: a test result is fail",
    message: "DCGM Diagnostic failed for test {test} with error: {error}",
    since: V,
    recovery: "reboot",
    defaultAction: "None"
  },
  {
    code: "DCGMHealthCode{code}",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description: "DCGM's health-check system reported an incident (dcgmError_t code).",
    trigger: "every 5 min: DCGM health check incident with health WARN (FAIL makes it a Condition)",
    message: "DCGM detected issues in health check system with error code {code}",
    since: V,
    recovery: "auto",
    defaultAction: "None",
    parameters: [{ name: "code", type: "integer", description: "DCGM dcgmError_t code" }],
    alsoEmittedAs: {
      severity: "Condition",
      when: "the DCGM health incident is FAIL (catalog key DCGMHealthCodeFatal)"
    }
  },
  {
    code: "DCGMFieldError{fieldId}",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description: "A watched DCGM field (clock event reasons, NVSwitch errors) reports a fault.",
    trigger: "every 5 min: fields 112, 856, 857 over the last 5 minutes",
    message: "DCGM detected fieldID {fieldId} with statusCode {status}{detail}",
    since: V,
    recovery: "auto",
    defaultAction: "None",
    parameters: [{ name: "fieldId", type: "integer", description: "DCGM field identifier" }]
  },
  {
    code: "FabricManagerNotRunning",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description:
      "NVIDIA Fabric Manager has not trained the GPU fabric: DCGM rates the status FAIL (NotStarted, Failure, Unrecognized, NvmlTooOld).",
    trigger:
      "every 5 min: DCGM field 170 is 1, 4, 5, 6 or unknown (0 NotSupported and 3 Success are healthy; 2 InProgress is a warning)",
    message: "Fabric Manager status: {status}",
    since: V,
    recovery: "auto",
    defaultAction: "Replace"
  },
  {
    code: "NvidiaFabricError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description: "The GPU fabric health mask reports a degraded or faulty sub-field.",
    trigger: "every 5 min: DCGM field 174 decoded per sub-field",
    message: "GPU fabric health mask 0x{mask}: {fields}",
    since: V,
    recovery: "auto",
    defaultAction: "Replace"
  },
  {
    code: "NvidiaXID{code}Error",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description: "The GPU driver reported an XID on the list of fatal XIDs.",
    trigger: "DCGM XID policy violation or `NVRM: Xid` kernel line, XID in the fatal list",
    message: "detected XID-{code} on the instance, review kernel logs for additional information.",
    since: V,
    recovery: "reboot",
    defaultAction: "Replace",
    parameters: [{ name: "code", type: "integer", description: "NVIDIA XID number (see FATAL_XIDS)" }]
  },
  {
    code: "NvidiaXID{code}Warning",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description: "The GPU driver reported an XID not on the fatal list.",
    trigger: "DCGM XID policy violation or `NVRM: Xid` kernel line, XID not in the fatal list",
    message: "detected unknown XID-{code} on the instance, review kernel logs for additional information.",
    since: V,
    recovery: "auto",
    defaultAction: "None",
    parameters: [{ name: "code", type: "integer", description: "NVIDIA XID number" }]
  },
  {
    code: "NvidiaDoubleBitError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description: "An uncorrectable (double-bit) ECC error.",
    trigger: "DCGM DBE policy violation",
    message: "detected {count} Nvidia Double Bit error(s) on location {location}",
    since: V,
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "NvidiaNVLinkError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description: "NVLink errors were counted.",
    trigger: "DCGM NVLink policy violation",
    message: "detected {count} NVLink errors on fieldId {fieldId}",
    since: V,
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "NvidiaPageRetirement",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description: "GPU memory pages were retired.",
    trigger: "DCGM max-retired-pages policy violation",
    message: "detected {sbe} SBE, and {dbe} DBE page retirements",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "NvidiaPowerError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description: "GPU power usage went outside its thresholds.",
    trigger: "DCGM power policy violation",
    message: "detected power usage outside of thresholds with severity code {value}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "NvidiaThermalError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description: "GPU temperature went outside its thresholds.",
    trigger: "DCGM thermal policy violation",
    message: "detected GPU thermals outside of thresholds with severity code {value}",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "NvidiaPCIeError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description: "PCIe replays were counted.",
    trigger: "DCGM PCIe policy violation",
    message: "detected {count} PCIe replays",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "NvidiaDeviceCountMismatch",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description: "Fewer GPUs are visible than device files, PCI functions or the instance type promise.",
    trigger: "every 5 min: NVML/DCGM count vs /dev/nvidia* vs PCI vendor 0x10de vs instance type",
    message: "{detail}",
    since: V,
    recovery: "auto",
    defaultAction: "Replace"
  },
  {
    code: "NvidiaNCCLError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description: "A process segfaulted inside libnccl.",
    trigger: "kernel log: `segfault at ... in libnccl.so`",
    message: "NCCL communication error caused by segfault in libnccl.so",
    since: V,
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "NvidiaMonitorNotWatching",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description:
      "The node has NVIDIA GPUs but the agent cannot watch them: neither DCGM nor NVML could be loaded. AcceleratedHardwareReady stays absent (not watching), never Unknown or True.",
    trigger: "agent start: NVIDIA devices present, libdcgm.so.4 and libnvidia-ml.so.1 both fail to load",
    message: "NVIDIA GPUs are not monitored: {problems}",
    since: "1.1.0",
    recovery: "auto",
    defaultAction: "None"
  },
  // 1.6.0: the driver's GPU recovery action (XID 154, NVML field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION = 230),
  // one code per value of nvmlDeviceGpuRecoveryAction_t. nodemend cannot reset one GPU: a reboot resets it.
  {
    code: "NvidiaGPUResetRequired",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description:
      "The GPU driver says the GPU must be reset before it can be used again (recovery action GPU_RESET, 1).",
    trigger: "XID 154, then NVML field 230 (GPU recovery action) reads 1 on that GPU",
    message: "GPU {gpu} needs a reset: the driver's recovery action is {action} (XID 154)",
    since: "1.6.0",
    recovery: "reboot",
    defaultAction: "Reboot"
  },
  {
    code: "NvidiaNodeRebootRequired",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description:
      "The GPU driver says the node must be rebooted to recover the GPU (recovery action NODE_REBOOT, 2).",
    trigger: "XID 154, then NVML field 230 (GPU recovery action) reads 2 on that GPU",
    message: "GPU {gpu} needs a node reboot: the driver's recovery action is {action} (XID 154)",
    since: "1.6.0",
    recovery: "reboot",
    defaultAction: "Reboot"
  },
  {
    code: "NvidiaGPUDrainAndResetRequired",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description:
      "The GPU driver says the GPU runs at reduced capacity: drain its work, then reset it (recovery action DRAIN_AND_RESET, 4).",
    trigger: "XID 154, then NVML field 230 (GPU recovery action) reads 4 on that GPU",
    message:
      "GPU {gpu} needs its work drained and a reset: the driver's recovery action is {action} (XID 154)",
    since: "1.6.0",
    recovery: "reboot",
    defaultAction: "Reboot"
  },
  {
    code: "NvidiaGPUDrainP2PRequired",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description:
      "The GPU driver asks for peer-to-peer (NVLink) traffic to be drained (recovery action DRAIN_P2P, 3); it names the final action in a later XID 154.",
    trigger: "XID 154, then NVML field 230 (GPU recovery action) reads 3 on that GPU",
    message:
      "GPU {gpu} needs its peer-to-peer traffic drained: the driver's recovery action is {action} (XID 154)",
    since: "1.6.0",
    recovery: "auto",
    defaultAction: "None"
  },
  {
    code: "NvidiaGPURecoveryActionOther",
    conditionType: "AcceleratedHardwareReady",
    severity: "Event",
    monitor: "nvidia",
    description:
      "The GPU driver reports a recovery action that is not a node action (RECOVER_IMEX_DOMAIN, 5) or that this version does not know.",
    trigger: "XID 154, then NVML field 230 (GPU recovery action) reads 5 or a value above 5",
    message: "GPU {gpu}: the driver's recovery action is {action} (XID 154)",
    since: "1.6.0",
    recovery: "auto",
    defaultAction: "None"
  },
  // 2.0.0: NVIDIA's XID 144-150 decode (Blackwell NVLink 5: SAW, RLW, TLW, TREX, NVLPW, NETIR, MSE), from the
  // kernel line's intrInfo and errorStatus registers; only the rows whose immediate action is RESET_GPU.
  {
    code: "NvidiaNVLinkGPUResetRequired",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "nvidia",
    description:
      "A Blackwell NVLink error (XID 144-150) whose registers NVIDIA's XID catalog decodes as a GPU fatal or link fatal error: the GPU needs a reset (a reboot here).",
    trigger:
      '`NVRM: Xid` kernel line of XID 144-150 whose unit, intrInfo and errorStatus match a RESET_GPU row of NVIDIA\'s "XID 144-150 Decode"',
    message:
      "GPU {pci} needs a reset: XID {code} {unit} {severity} {detail} (intrInfo {intrInfo}, errorStatus {errorStatus}) decodes to RESET_GPU",
    since: "2.0.0",
    recovery: "reboot",
    defaultAction: "Reboot"
  },
  // ---------------------------------------------------------------- AcceleratedHardwareReady (Neuron)
  {
    code: "NeuronSRAMUncorrectableError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "neuron",
    description: "A Neuron device reported an uncorrectable SRAM error.",
    trigger: "kernel log: `NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR`",
    message: "Discovered SRAM Uncorrectable Error",
    since: V,
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "NeuronNCUncorrectableError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "neuron",
    description: "A NeuronCore reported an uncorrectable error.",
    trigger: "kernel log: `NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR`",
    message: "Discovered NC Uncorrectable Error",
    since: V,
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "NeuronHBMUncorrectableError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "neuron",
    description: "A Neuron device reported an uncorrectable HBM error.",
    trigger: "kernel log: `NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR`",
    message: "Discovered HBM Uncorrectable Error",
    since: V,
    recovery: "reboot",
    defaultAction: "Replace"
  },
  {
    code: "NeuronDMAError",
    conditionType: "AcceleratedHardwareReady",
    severity: "Condition",
    monitor: "neuron",
    description: "A Neuron device reported a DMA error.",
    trigger: "kernel log: `NEURON_HW_ERR=DMA_ERROR`",
    message: "Discovered DMA Error",
    since: V,
    recovery: "reboot",
    defaultAction: "Replace"
  }
] as const satisfies readonly CatalogEntry[]

/**
 * XIDs that produce `NvidiaXID{n}Error` (a Condition); every other XID produces `NvidiaXID{n}Warning`.
 * Since 2.0.0 NVIDIA's XID catalog chooses (docs/nvidia-monitor.md, "NVIDIA's XID catalog"): an XID is fatal when
 * its Immediate Action bucket asks for a node action on a generation it applies to, and its action is the
 * strongest of those: RESET_GPU, RESTART_BM, RESTART_VM, WORKFLOW_XID_48 and WORKFLOW_NVLINK_ERR (XID 74: "a GPU
 * reset or node reboot is needed to clear this error") -> Reboot (nodemend cannot reset one GPU), CHECK_MECHANICALS
 * and CONTACT_SUPPORT -> Replace. IGNORE, RESTART_APP and the buckets that defer to XID 154 are not fatal. The
 * agent's tests derive this table from its copy of the catalog (packages/agent xid-catalog.ts).
 */
export const FATAL_XIDS: Readonly<Record<number, "Reboot" | "Replace">> = {
  46: "Reboot",
  48: "Reboot",
  54: "Replace",
  62: "Reboot",
  64: "Reboot",
  74: "Reboot",
  79: "Reboot",
  95: "Reboot",
  109: "Reboot",
  110: "Reboot",
  119: "Reboot",
  120: "Reboot",
  136: "Reboot",
  140: "Reboot",
  142: "Replace",
  143: "Reboot",
  151: "Reboot",
  155: "Reboot",
  156: "Reboot",
  158: "Reboot"
}
