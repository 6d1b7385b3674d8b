/**
 * The built-in log rules, as data: the same shape as the operator's `logRules` (`UserRule`, overrides.ts), compiled
 * by the same path (compile.ts), listed by `nodemend-agent rules list` and changed or disabled by id through
 * `logRuleOverrides`. `BuiltinRule` narrows `reason` to the catalog's reason codes and templates, so a misspelled
 * reason fails the typecheck; patterns are written as regex literals and shipped as their source strings.
 * Fixture lines of each rule (matches and benign look-alikes, with their sources) are in builtin-fixtures.ts.
 *
 * The EKS Node Monitoring Agent's patterns were the starting point; each pattern below also matches the wordings
 * of current and older kernels, kubelets, systemd, runc/containerd and the VPC CNI (real lines, with their
 * sources, are in test/fixtures/log-lines.ts and, per component and version, test/fixtures/log-lines-versions.ts;
 * the spread is listed in docs/log-rules.md), and stays silent on their benign look-alikes.
 *
 * Kernel lines are matched on the record text (raw /dev/kmsg records carry no `[  12.3]` prefix), on
 * `dmesg` output and on syslog copies alike, so patterns are unanchored or accept those prefixes.
 * Rules of one monitor are tried in order and the first match wins per line (SoftLockup before
 * KernelBug); rules of different monitors all fire (a libnccl segfault is AppCrash and NvidiaNCCLError).
 */
import { FATAL_XIDS } from "@nodemend/reason-codes"
import type { BuiltinRule, CatalogReason, LogSourceId } from "./rule.ts"

/** XIDs on the catalog's fatal list give `NvidiaXID{n}Error`; any other XID gives `NvidiaXID{n}Warning`. */
const FATAL_XID_REASONS: Readonly<Record<string, CatalogReason>> = Object.fromEntries(
  Object.keys(FATAL_XIDS).map((xid) => [xid, "NvidiaXID{code}Error"])
)

const KUBELET: LogSourceId = "journal:kubelet"
const SYSTEMD: LogSourceId = "journal:systemd"
const IPAMD_LOG: LogSourceId = "file:/var/log/aws-routed-eni/ipamd.log"
const NPA_LOG: LogSourceId = "file:/var/log/aws-routed-eni/network-policy-agent.log"
/** AL2 rsyslog writes cron to /var/log/cron; Bottlerocket/others to cron.log; AL2023 only to journald. */
const CRON: readonly LogSourceId[] = [
  "file:/var/log/cron.log",
  "file:/var/log/cron",
  "journal:CROND",
  "journal:CRON"
]

export const BUILTIN_RULES: readonly BuiltinRule[] = [
  // ------------------------------------------------------------------ kernel (dmesg)
  {
    id: "kernel.soft-lockup",
    sources: ["dmesg"],
    reason: "SoftLockup",
    literals: ["soft lockup"],
    // `watchdog: BUG: soft lockup` (>= 4.x), `NMI watchdog: BUG: soft lockup` (RHEL 7), bare `BUG: soft lockup` (3.x)
    pattern:
      /BUG: soft lockup\.? - CPU#(?<cpu>\d+) stuck for (?<duration>\d+s)!(?: \[(?<name>.*?)(?::\d+)?\])?/
        .source,
    subject: "cpu{cpu}"
  },
  {
    id: "kernel.bug",
    sources: ["dmesg"],
    reason: "KernelBug",
    literals: ["BUG: "],
    // At the start of the record text, after a `[ 12.3]` timestamp or after `kernel: ` (syslog copy).
    // A soft lockup (`BUG: soft lockup` on 3.x kernels) is SoftLockup, also when that reason is disabled.
    pattern: /(?:^|\] |kernel: )BUG: (?!soft lockup)(?<what>\S.*)/.source
  },
  {
    id: "kernel.bug-at",
    sources: ["dmesg"],
    reason: "KernelBug",
    literals: ["kernel BUG at "],
    pattern: /kernel BUG at (?<what>\S+)/.source
  },
  {
    // arm64 (Graviton) prints no `BUG:` line for a kernel page fault: die_kernel_fault() in arch/arm64/mm/fault.c
    // (5.10, 5.15, 6.1, 6.12) prints `Unable to handle kernel NULL pointer dereference at virtual address X` (also
    // `paging request`, `write to read-only memory`, ...), then die("Oops"). x86 prints `BUG: kernel NULL pointer
    // dereference, address: X` (kernel.bug). `[Firmware Bug]: Unable to handle ... in EFI runtime service` is a fault
    // the kernel recovered from and stays silent.
    id: "kernel.arm64-kernel-fault",
    sources: ["dmesg"],
    reason: "KernelBug",
    literals: ["Unable to handle kernel "],
    pattern:
      /(?:^|\] |kernel: )Unable to handle kernel (?<what>\S.*?) at virtual address (?<address>[0-9a-f]+)/
        .source
  },
  {
    // arm64 __die() (arch/arm64/kernel/traps.c): `Internal error: STR: ESR [#N] PREEMPT SMP`, once per oops. Counted
    // only where no earlier line of the same oops was: `Oops` follows `Unable to handle kernel ...` (above), `Oops -
    // BUG` follows `kernel BUG at` (kernel.bug-at), `Oops - KASAN` follows `BUG: KASAN:` (kernel.bug). The others
    // stand alone: `Oops - Undefined instruction`, `- BTI`, `- FPAC`, `- CFI`, `- BRK`, and kernel-mode aborts raised
    // through arm64_notify_die (`synchronous external abort`, ...).
    id: "kernel.arm64-oops",
    sources: ["dmesg"],
    reason: "KernelBug",
    literals: ["Internal error: "],
    pattern:
      /(?:^|\] |kernel: )Internal error: (?!Oops: |Oops - (?:BUG|KASAN): )(?<what>[^:]+): [0-9a-f]+ \[#\d+\]/
        .source
  },
  {
    id: "kernel.trap",
    sources: ["dmesg"],
    reason: "AppCrash",
    literals: ["traps: "],
    pattern: /traps: (?<name>\S.*?)\[\d+\] /.source,
    subject: "{name}"
  },
  {
    id: "kernel.segfault",
    sources: ["dmesg"],
    reason: "AppCrash",
    literals: ["]: segfault at "],
    pattern: /(?:^|[\s;:])(?<name>[^\s[\];]+)\[\d+\]: segfault at /.source,
    subject: "{name}"
  },
  {
    id: "kernel.hung-task",
    sources: ["dmesg"],
    reason: "AppBlocked",
    literals: ["blocked for more than"],
    pattern: /task (?<name>.+?):\d+ blocked for more than (?<seconds>\d+) seconds/.source,
    subject: "{name}"
  },
  {
    id: "kernel.conntrack-full",
    sources: ["dmesg"],
    reason: "ConntrackExceededKernel",
    literals: ["table full, dropping packet"],
    pattern: /(?:nf|ip)_conntrack: table full, dropping packet/.source
  },
  // ------------------------------------------------------------------ kernel: node-problem-detector's kernel monitor
  // NPD v1.36's config/kernel-monitor.json rules that the rules above did not cover (issue #27; the mapping of every
  // NPD rule is in docs/log-rules.md). NPD matches its patterns anywhere in the line; these match the same lines
  // and the wordings of older and newer kernels, and leave out the companion lines of one event.
  {
    // NPD's KernelOops `divide error: 0000 [#N] SMP`; kernels with PREEMPT or NOPTI print more flags, >= 6.x an `Oops: ` prefix.
    id: "kernel.divide-error",
    sources: ["dmesg"],
    reason: "KernelBug",
    literals: ["divide error: "],
    pattern: /(?:^|\] |kernel: |Oops: )divide error: [0-9a-f]{4} \[#\d+\]/.source
  },
  {
    // Node-wide OOM only: `Out of memory: Killed process N (name) ...` (>= 4.19) and `Out of memory: Kill process N
    // (name) score S or sacrifice child` (< 4.19, followed by a bare `Killed process` line that stays silent, so one kill
    // is one Event). A pod at its own memory limit is `Memory cgroup out of memory: ...` (lower-case `out`): kubelet
    // already reports that as the container's OOMKilled. NPD's OOMKilling counts both.
    id: "kernel.oom-kill",
    sources: ["dmesg"],
    reason: "OutOfMemoryKill",
    literals: ["Out of memory"],
    pattern:
      /Out of memory(?: \([^)]*\))?: Kill(?:ed)? process (?<pid>\d+) \((?<name>.+?)\)(?= total-vm| score|,|$)/
        .source
  },
  {
    // The kernel prints this every 10 s while a device's references are not released (net/core/dev.c). NPD fires
    // a permanent KernelDeadlock on 3 within 20 min (kernel-monitor-counter.json); so does this rule.
    id: "kernel.unregister-netdevice",
    sources: ["dmesg"],
    reason: "UnregisterNetDeviceStuck",
    literals: ["unregister_netdevice: waiting for "],
    pattern: /unregister_netdevice: waiting for (?<device>\S+) to become free\. Usage count = (?<count>-?\d+)/
      .source,
    subject: "{device}",
    minOccurrences: 3,
    windowSeconds: 1200
  },
  // UEFI CPER records (drivers/firmware/efi/cper.c), printed by GHES at run time (`{N}[Hardware Error]: `) or from the
  // BERT table at boot (`[Hardware Error]: `: the previous boot's error). One `event severity` line per record; the
  // section lines after it (`Error 0, type: fatal`, `section_type: ...`) stay silent.
  {
    id: "kernel.cper-fatal",
    sources: ["dmesg"],
    reason: "HardwareErrorFatal",
    literals: ["[Hardware Error]: event severity: "],
    pattern: /\[Hardware Error\]: event severity: fatal\b/.source
  },
  {
    id: "kernel.cper-recoverable",
    sources: ["dmesg"],
    reason: "HardwareErrorRecoverable",
    literals: ["[Hardware Error]: event severity: "],
    pattern: /\[Hardware Error\]: event severity: recoverable\b/.source
  },
  {
    id: "kernel.cper-corrected",
    sources: ["dmesg"],
    reason: "HardwareErrorCorrected",
    literals: ["[Hardware Error]: event severity: "],
    pattern: /\[Hardware Error\]: event severity: corrected\b/.source
  },
  {
    // A run of corrected errors predicts an uncorrectable one: mcelog's default DIMM threshold, 10 in 24 h.
    id: "kernel.cper-corrected-repeatedly",
    sources: ["dmesg"],
    reason: "HardwareErrorCorrectedRepeatedly",
    literals: ["[Hardware Error]: event severity: "],
    pattern: /\[Hardware Error\]: event severity: corrected\b/.source,
    alongside: true,
    minOccurrences: 10,
    windowSeconds: 86400
  },
  // EDAC (drivers/edac/edac_mc.c): `EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#2_DIMM#0 (channel:2 ...)`,
  // any CE kind (read, scrubbing, ...) and the older `EDAC MC0: 4 CE error on CPU#0Channel#2_DIMM#0 (...)`. NPD's
  // `CE memory read error` sees read errors only. A line counts once whatever its error count.
  {
    id: "kernel.edac-corrected",
    sources: ["dmesg"],
    reason: "MemoryErrorCorrected",
    literals: ["EDAC MC"],
    pattern: /EDAC (?<controller>MC\d+): \d+ CE (?:.*? )?on (?<location>[^\s(]+)/.source,
    subject: "{controller} {location}"
  },
  {
    id: "kernel.edac-corrected-repeatedly",
    sources: ["dmesg"],
    reason: "MemoryErrorCorrectedRepeatedly",
    literals: ["EDAC MC"],
    pattern: /EDAC (?<controller>MC\d+): \d+ CE (?:.*? )?on (?<location>[^\s(]+)/.source,
    subject: "{controller} {location}",
    alongside: true,
    minOccurrences: 10,
    windowSeconds: 86400
  },
  // ------------------------------------------------------------------ kernel (kubelet journal, cron)
  {
    id: "kernel.fork-exec-eagain",
    sources: [KUBELET],
    reason: "ForkFailedOutOfPIDs",
    literals: ["fork/exec"],
    pattern: /fork\/exec .*resource temporarily unavailable/.source
  },
  {
    id: "kernel.go-thread-eagain",
    sources: [KUBELET],
    reason: "ForkFailedOutOfPIDs",
    literals: ["failed to create new OS thread"],
    // errno 11 is EAGAIN (out of PIDs/threads); errno 22 (EINVAL, e.g. emulation) is not ours.
    pattern: /failed to create new OS thread \(have \d+ already; errno=11\)/.source
  },
  {
    // A cgo-enabled binary (kubelet builds with cgo, docker, runc) creates threads through libc: out of
    // PIDs it aborts with this line instead of Go's `failed to create new OS thread` (kubernetes#44518).
    id: "kernel.cgo-pthread-eagain",
    sources: [KUBELET],
    reason: "ForkFailedOutOfPIDs",
    literals: ["pthread_create failed: Resource temporarily unavailable"],
    pattern: /runtime\/cgo: pthread_create failed: Resource temporarily unavailable/.source
  },
  {
    id: "kernel.rapid-cron",
    sources: CRON,
    reason: "RapidCron",
    literals: [") CMD ("],
    // NMA keyed on the 6th field, which is the user; the job is the (user, command) pair.
    pattern: /\((?<user>[^()\s]+)\) CMD \((?<command>.*)\)\s*$/.source,
    subject: "{user} {command}",
    minOccurrences: 2,
    windowSeconds: 300
  },
  // ------------------------------------------------------------------ container-runtime (journal)
  {
    id: "runtime.pod-stuck-terminating",
    sources: [KUBELET],
    reason: "PodStuckTerminating",
    literals: ["Pod still has one or more containers in the non-exited state"],
    pattern:
      /Pod still has one or more containers in the non-exited state and will not be removed from desired state"? pod="(?<pod>[^"]+)"/
        .source,
    subject: "{pod}",
    minOccurrences: 2,
    windowSeconds: 600
  },
  {
    id: "runtime.kubelet-failed",
    sources: [SYSTEMD],
    reason: "KubeletFailed",
    literals: ["kubelet.service"],
    // systemd >= 227: `kubelet.service: Failed with result 'exit-code'.`; older: `Unit kubelet.service entered failed state.`
    // 229 (Ubuntu 16.04) prints `kubelet.service: Unit entered failed state.` just before `Failed with result`: left
    // silent, so one failure is one Event.
    pattern:
      /(?:^|\s)kubelet\.service: Failed with result '(?<result>[^']+)'|Unit kubelet\.service entered failed state/
        .source
  },
  {
    id: "runtime.oci-create-failed",
    sources: [KUBELET],
    reason: "ContainerRuntimeFailed",
    literals: ["OCI runtime create failed", "oci runtime error: "],
    // docker >= 17.06 / containerd: `OCI runtime create failed: ...`; docker 1.12-17.03 (runc 1.0-rc2/rc3):
    // `oci runtime error: container_linux.go:247: starting container process caused ...`. An exec into a
    // running container (`oci runtime error: exec failed: ...`, exec probes, kubectl exec) is not a create.
    pattern: /(?:OCI runtime create failed|oci runtime error): (?!exec failed)(?<detail>.*)/.source
  },
  {
    id: "runtime.readiness-probe-structured",
    sources: [KUBELET],
    reason: "ReadinessProbeFailures",
    literals: ['probeType="Readiness"'],
    // kubelet >= 1.21 (structured): `"Probe failed" probeType="Readiness" pod="ns/name" ...`; "Probe errored" is not a failure.
    pattern: /"Probe failed" probeType="Readiness" pod="(?<pod>[^"]+)"/.source,
    // A token bucket of 1/s with burst 5 refuses the 6th failure within 5 s.
    minOccurrences: 6,
    windowSeconds: 5
  },
  {
    id: "runtime.readiness-probe-legacy",
    sources: [KUBELET],
    reason: "ReadinessProbeFailures",
    literals: ['Readiness probe for "'],
    pattern: /Readiness probe for "(?<target>[^"]*)" failed/.source,
    minOccurrences: 6,
    windowSeconds: 5
  },
  {
    id: "runtime.liveness-probe-structured",
    sources: [KUBELET],
    reason: "LivenessProbeFailures",
    literals: ['probeType="Liveness"'],
    pattern: /"Probe failed" probeType="Liveness" pod="(?<pod>[^"]+)"/.source,
    minOccurrences: 6,
    windowSeconds: 5
  },
  {
    id: "runtime.liveness-probe-legacy",
    sources: [KUBELET],
    reason: "LivenessProbeFailures",
    literals: ['Liveness probe for "'],
    pattern: /Liveness probe for "(?<target>[^"]*)" failed/.source,
    minOccurrences: 6,
    windowSeconds: 5
  },
  {
    id: "runtime.service-failed-to-start",
    sources: [SYSTEMD],
    reason: "ServiceFailedToStart",
    literals: ["Failed to start "],
    // systemd >= 250: `Failed to start kubelet.service - Kubernetes Kubelet.`; older: `Failed to start Kubernetes Kubelet.`
    pattern: /(?:^|: )Failed to start (?<unit>.+?)(?: - .*)?\.$/.source,
    subject: "{unit}"
  },
  // ------------------------------------------------------------------ networking (VPC CNI, kube-proxy)
  {
    id: "networking.ipamd-no-sa-token",
    sources: [IPAMD_LOG],
    reason: "IPAMDNotReady",
    literals: ["no configuration has been provided"],
    pattern:
      /Failed to check API server connectivity: invalid configuration: no configuration has been provided/
        .source,
    message: "IPAM-D Missing Service Account Token and the IPAM daemon cannot connect to the API server.",
    // One boot-time line latched the NMA condition (NMA#215): require the failure to persist ~1 min.
    minOccurrences: 3,
    windowSeconds: 120
  },
  {
    // VPC CNI 1.5-1.7 (seelog text, then zap JSON): `Failed to create client: error communicating with apiserver: ...`,
    // after which ipamd exits, so each line is one failed start; three in 10 min are a crash loop, not a boot transient.
    // 1.8-1.10 log nothing before exiting: IPAMDRepeatedlyRestart covers those.
    id: "networking.ipamd-create-client-failed",
    sources: [IPAMD_LOG],
    reason: "IPAMDNotReady",
    literals: ["error communicating with apiserver"],
    pattern: /Failed to create client: error communicating with apiserver/.source,
    minOccurrences: 3,
    windowSeconds: 600
  },
  {
    id: "networking.ipamd-api-unreachable",
    sources: [IPAMD_LOG],
    reason: "IPAMDNotReady",
    literals: ["Unable to reach API Server", "Failed to check API server connectivity"],
    pattern: /Unable to reach API Server|Failed to check API server connectivity/.source,
    // ipamd retries every 5-10 s and waits up to 30 s at boot; 6 failures in 2 min is not a boot transient.
    minOccurrences: 6,
    windowSeconds: 120
  },
  {
    // aws-k8s-agent logs this once the API server answers (pkg/k8sapi CheckAPIServerConnectivity): the
    // condition clears instead of latching until the agent restarts (NMA#215).
    id: "networking.ipamd-api-reachable",
    sources: [IPAMD_LOG],
    reason: "IPAMDNotReady",
    // 1.8+: `Successful communication with the Cluster! ...`; 1.5-1.7: `Communication with server successful`.
    literals: ["Successful communication with the Cluster", "Communication with server successful"],
    pattern: /Successful communication with the Cluster|Communication with server successful/.source,
    resolves: true
  },
  {
    id: "networking.ipamd-restart",
    sources: [IPAMD_LOG],
    reason: "IPAMDRepeatedlyRestart",
    literals: ["Starting L-IPAMD"],
    pattern: /Starting L-IPAMD/.source,
    minOccurrences: 5,
    windowSeconds: 1200
  },
  {
    id: "networking.ipamd-no-ips",
    sources: [IPAMD_LOG],
    reason: "IPAMDNoIPs",
    // Secondary IPs and ENIs: `InsufficientFreeAddressesInSubnet`; prefix delegation (1.9+) when no free /28 is
    // left: `InsufficientCidrBlocks`; CreateNetworkInterface in a full subnet (1.18+ logs):
    // `InvalidParameterValue: There aren't sufficient free Ipv4 addresses or prefixes`.
    literals: [
      "InsufficientFreeAddressesInSubnet",
      "InsufficientCidrBlocks",
      "There aren't sufficient free Ipv4 addresses or prefixes"
    ],
    pattern:
      /InsufficientFreeAddressesInSubnet|InsufficientCidrBlocks|There aren't sufficient free Ipv4 addresses or prefixes/
        .source
  },
  {
    id: "networking.kube-proxy-missing-resource",
    sources: ["podlogs:kube-proxy"],
    reason: "KubeProxyNotReady",
    literals: ["the server could not find the requested resource"],
    // client-go >= 0.19: `Failed to watch X: failed to list X: ...` (>= 0.31 inside `"Unhandled Error" err="..."`);
    // older reflectors: `Failed to list X: ...`. The reflector's lower-case `failed to list X` warning that
    // precedes the error line is the same failure and stays silent.
    pattern:
      /Failed to (?:watch \S+: failed to )?list (?<resource>\S+): the server could not find the requested resource/
        .source,
    subject: "{resource}"
  },
  {
    // The API server refuses kube-proxy's credentials (expired or rotated token, missing RBAC): unlike a refused
    // connection during an API server restart this does not heal by itself. Reflectors retry every 1-30 s.
    id: "networking.kube-proxy-list-denied",
    sources: ["podlogs:kube-proxy"],
    reason: "KubeProxyNotReady",
    literals: [": Unauthorized", " is forbidden: "],
    pattern: /Failed to (?:watch \S+: failed to )?list (?<resource>\S+): (?:Unauthorized|\S+ is forbidden: )/
      .source,
    subject: "{resource}",
    minOccurrences: 5,
    windowSeconds: 300
  },
  {
    id: "networking.npa-bpf-state",
    sources: [NPA_LOG],
    reason: "NPABPFRecoveryError",
    literals: ["Failed to recover the BPF state", "BPF State Recovery failed"],
    pattern: /Failed to recover the BPF state|BPF State Recovery failed/.source,
    minOccurrences: 2,
    windowSeconds: 600
  },
  {
    id: "networking.npa-bpf-maps",
    sources: [NPA_LOG],
    reason: "NPABPFRecoveryError",
    literals: ["failed to recover global maps", "in-mem map"],
    pattern: /failed to recover global maps|got err for (?:cluster policy )?(?:ingress|egress) in-mem map/
      .source,
    message: "NPA eBPF map recovery/write error detected",
    minOccurrences: 2,
    windowSeconds: 600
  },
  // ------------------------------------------------------------------ storage
  {
    id: "storage.etc-hosts-mount",
    sources: ["file:/var/log/messages", KUBELET],
    reason: "EtcHostsMountFailed",
    literals: ["etc-hosts"],
    // runc >= 1.1: `error mounting "<pod>/etc-hosts" to rootfs at "/etc/hosts"`; runc 1.0: `rootfs_linux.go:76:
    // mounting "<pod>/etc-hosts" to rootfs at "/etc/hosts" caused: ...` (NMA's `error mounting` misses it);
    // older: `... to rootfs "<r>" at "<r>/etc/hosts"`. Quotes arrive escaped once or twice inside error chains.
    pattern: /(?:error |\d: )mounting [\\"]*(?<source>[^"\s\\]*etc-hosts)[\\"]* to rootfs.*?\/etc\/hosts/
      .source
  },
  {
    id: "storage.kubelet-disk-usage-slow",
    sources: [KUBELET],
    reason: "KubeletDiskUsageSlow",
    // cAdvisor >= v0.33 (kubelet >= 1.14): `fs: disk usage and inodes count on following dirs took`;
    // older: `du and find on following dirs took`.
    literals: ["disk usage and inodes count on following dirs took", "du and find on following dirs took"],
    pattern:
      /(?:fs: disk usage and inodes count|du and find) on following dirs took (?<duration>\S+?):?(?:\s|$)/
        .source
  },
  {
    id: "storage.block-io-error",
    sources: ["dmesg"],
    reason: "BlockDeviceIOError",
    literals: [" error, dev "],
    // `end_request:` (< 3.x), `print_req_error:` (4.18-5.2), `blk_update_request:` (5.3-5.15), bare (>= 5.16),
    // and `critical medium|target error` (>= 4.18). Loop, optical and floppy (VMware guests) devices are not
    // disks; `operation not supported error` is a refused discard, not an I/O error.
    pattern:
      /(?:^|[\s:;])(?:I\/O|critical medium|critical target|critical space allocation) error, dev (?!(?:loop|sr|fd)\d)(?<device>[\w-]+), (?<location>sector \d+)/
        .source,
    subject: "{device}"
  },
  {
    id: "storage.buffer-io-error",
    sources: ["dmesg"],
    reason: "BlockDeviceIOError",
    literals: ["Buffer I/O error on dev"],
    // `on device X` (older kernels) and `on dev X` (>= 4.x)
    pattern:
      /Buffer I\/O error on dev(?:ice)? (?!(?:loop|sr|fd)\d)(?<device>[\w-]+), (?<location>logical block \d+)/
        .source,
    subject: "{device}"
  },
  {
    // The NVMe driver gives up on a controller that stays dead through a reset: `Removing after probe failure
    // status: N` (4.x-5.x), `Disabling device after reset failure: N` (6.x). Its namespaces are gone, with or
    // without an I/O error line (an idle disk has none). Timeouts, aborts and `controller is down; will reset`
    // are recovered from; EBUSY (-16) is a userspace driver (vfio-pci/SPDK) taking the controller over.
    id: "storage.nvme-controller-removed",
    sources: ["dmesg"],
    reason: "BlockDeviceIOError",
    literals: ["Removing after probe failure status: ", "Disabling device after reset failure: "],
    pattern:
      /nvme (?<device>nvme\d+): (?:Removing after probe failure status|Disabling device after reset failure): (?!-16\b)(?<status>-\d+)/
        .source,
    message:
      "NVMe controller {device} was removed after a failed reset (status {status}): its disks are gone",
    subject: "{device}"
  },
  // ------------------------------------------------------------------ storage: node-problem-detector's filesystem rules
  {
    // fs/ext4/super.c: `EXT4-fs error (device sda1): func:line: ...` and `EXT4-fs error (device sdf) in func:line: ...`.
    id: "storage.ext4-error",
    sources: ["dmesg"],
    reason: "Ext4FilesystemError",
    literals: ["EXT4-fs error (device "],
    pattern: /EXT4-fs error \(device (?<device>[^)\s]+)\):? (?<detail>\S.*)/.source,
    subject: "{device}"
  },
  {
    // `EXT4-fs warning (device sda4): ext4_dx_add_entry:2199: ...`; the ratelimit notice `EXT4-fs warning: N callbacks
    // suppressed` names no device and stays silent.
    id: "storage.ext4-warning",
    sources: ["dmesg"],
    reason: "Ext4FilesystemWarning",
    literals: ["EXT4-fs warning (device "],
    pattern: /EXT4-fs warning \(device (?<device>[^)\s]+)\):? (?<detail>\S.*)/.source,
    subject: "{device}"
  },
  {
    // fs/xfs xfs_do_force_shutdown: < 5.15 `XFS (xvdb): Log I/O Error Detected.  Shutting down filesystem` (also
    // `Corruption of in-memory data detected.`, `I/O Error Detected.`); >= 5.15 `XFS (sda4): Corruption of in-memory data
    // (0x8) detected at FUNC (FILE:LINE).  Shutting down filesystem.` The `xfs_do_force_shutdown(0x8) called from line
    // ...` line before it and `Please umount the filesystem and rectify the problem(s)` after it stay silent.
    id: "storage.xfs-shutdown",
    sources: ["dmesg"],
    reason: "XFSFilesystemShutdown",
    literals: ["Shutting down filesystem"],
    pattern: /XFS \((?<device>[^)\s]+)\): (?<why>\S.*?)\.?\s+Shutting down filesystem/.source,
    subject: "{device}"
  },
  {
    // fs/xfs/xfs_log.c xlog_force_shutdown(), 6.1 and 6.12 (absent in 5.10 and 5.15): a log I/O error shuts the
    // filesystem down with one line, `XFS (dm-0): Filesystem has been shut down due to log error (0x2).`, and no
    // `Shutting down filesystem` line (xfs_do_force_shutdown() then finds the filesystem already shut down). The
    // `log I/O error -5` line before it and `Please unmount the filesystem ...` after it stay silent.
    id: "storage.xfs-log-shutdown",
    sources: ["dmesg"],
    reason: "XFSFilesystemShutdown",
    literals: ["shut down due to log error"],
    pattern:
      /XFS \((?<device>[^)\s]+)\): Filesystem has been shut down due to (?<why>log error \(0x[0-9a-f]+\))/
        .source,
    subject: "{device}"
  },
  {
    // ext2/3/4 with errors=remount-ro: `EXT4-fs (xvda9): Remounting filesystem read-only` (NPD's readonly-monitor.json).
    // An administrator's `mount -o remount,ro` prints `re-mounted` or nothing and stays silent.
    id: "storage.remounted-read-only",
    sources: ["dmesg"],
    reason: "FilesystemRemountedReadOnly",
    literals: ["Remounting filesystem read-only"],
    pattern: /EXT[234]-fs \((?<device>[^)\s]+)\): Remounting filesystem read-only/.source,
    subject: "{device}"
  },
  // ------------------------------------------------------------------ nvidia (dmesg)
  {
    id: "nvidia.xid",
    sources: ["dmesg"],
    // XIDs of the catalog's fatal list are `NvidiaXID{n}Error` (Conditions), every other XID a Warning (Event).
    reason: "NvidiaXID{code}Warning",
    reasonByGroup: { group: "code", reasons: FATAL_XID_REASONS },
    literals: ["NVRM: Xid"],
    // Driver kernel_rc.c: `(PCI:DDDD:BB:DD)`, with MIG attribution `(PCI:DDDD:BB:DD GPU-I:gg[ GPU-CI:cc])`;
    // older drivers omit `PCI:`; a domain above 0xffff prints more than four digits.
    pattern:
      /NVRM: Xid \((?:PCI:)?(?<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)(?: GPU-I:[0-9a-fA-F]+(?: GPU-CI:[0-9a-fA-F]+)?)?\): (?<code>\d{1,5}),/
        .source,
    subject: "{pci}"
  },
  {
    // Blackwell NVLink 5 XIDs 144-150, in NVIDIA's documented form (the catalog's WORKFLOW_NVLINK5_ERR class):
    // `<xid>, <sub component> <fatal vs nonfatal> <Crosscontain> <injected> <link> (<intrInfo> <errorStatus> ...)`
    // after kernel_rc.c's `NVRM: Xid (PCI:...): ` (and its optional `pid=..., name=..., `). It fires alongside
    // nvidia.xid's NvidiaXID{n}Warning, and only when NVIDIA's "XID 144-150 Decode" says RESET_GPU.
    id: "nvidia.nvlink5-reset-gpu",
    sources: ["dmesg"],
    reason: "NvidiaNVLinkGPUResetRequired",
    literals: ["NVRM: Xid"],
    pattern:
      /NVRM: Xid \((?:PCI:)?(?<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)(?: GPU-I:[0-9a-fA-F]+(?: GPU-CI:[0-9a-fA-F]+)?)?\): (?<code>14[4-9]|150), (?:pid=[^,]*, name=[^,]*, )?(?<unit>[^\s(),]+) (?<severity>[^\s()]+) (?<detail>[^()]*?) ?\((?<intrInfo>0x[0-9a-fA-F]{1,8}) (?<errorStatus>0x[0-9a-fA-F]{1,8})[ )]/
        .source,
    decoder: "nvidia-nvlink5-reset-gpu",
    alongside: true,
    subject: "{pci}"
  },
  {
    // Newer drivers report a lost GPU without an Xid line (NVIDIA/NVSentinel#155); it is Xid 79's fault.
    // One kmsg record; its embedded newlines arrive unescaped.
    id: "nvidia.fallen-off-bus",
    sources: ["dmesg"],
    reason: "NvidiaXID79Error",
    literals: ["fallen off the bus"],
    pattern:
      /NVRM: The NVIDIA GPU (?<pci>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?[\s\S]*?fallen off the bus/
        .source,
    message: "detected XID-79 on the instance, review kernel logs for additional information.",
    subject: "{pci}"
  },
  {
    id: "nvidia.nccl-segfault",
    sources: ["dmesg"],
    reason: "NvidiaNCCLError",
    literals: ["libnccl.so"],
    pattern: /segfault at .* in libnccl\.so/.source
  },
  // ------------------------------------------------------------------ neuron (dmesg)
  // The Neuron driver prints `NEURON_HW_ERR=<code> instance-id=... nd-id=N nc-id=N ...`. NMA required a space
  // before the key, which a raw /dev/kmsg record (`6,1,2,-;NEURON_HW_ERR=...`) does not have.
  {
    id: "neuron.sram",
    sources: ["dmesg"],
    reason: "NeuronSRAMUncorrectableError",
    literals: ["NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR"],
    pattern: /NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR(?:\s|$)(?:.*?\bnd-id=(?<device>\d+))?/.source,
    subject: "nd{device}"
  },
  {
    id: "neuron.nc",
    sources: ["dmesg"],
    reason: "NeuronNCUncorrectableError",
    literals: ["NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR"],
    pattern: /NEURON_HW_ERR=NC_UNCORRECTABLE_ERROR(?:\s|$)(?:.*?\bnd-id=(?<device>\d+))?/.source,
    subject: "nd{device}"
  },
  {
    id: "neuron.hbm",
    sources: ["dmesg"],
    reason: "NeuronHBMUncorrectableError",
    literals: ["NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR"],
    pattern: /NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR(?:\s|$)(?:.*?\bnd-id=(?<device>\d+))?/.source,
    subject: "nd{device}"
  },
  {
    id: "neuron.dma",
    sources: ["dmesg"],
    reason: "NeuronDMAError",
    literals: ["NEURON_HW_ERR=DMA_ERROR"],
    pattern: /NEURON_HW_ERR=DMA_ERROR(?:\s|$)(?:.*?\bnd-id=(?<device>\d+))?/.source,
    subject: "nd{device}"
  }
]
