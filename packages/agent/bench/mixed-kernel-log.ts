/**
 * A mixed kernel log: mostly benign lines (the usual boot, network, storage, container and audit chatter
 * of a node, random ids) with `faultRate` fault lines from the cited fixtures (test/fixtures/log-lines.ts).
 * Three templates are chatter to the agent but problems to node-problem-detector (a pod's memcg OOM kill, a loop
 * device's buffer I/O error) or to both (a corrected EDAC memory error on one DIMM: since issue #27 the agent
 * counts it too, and escalates every 10th within 24 h); they stay, so the side-by-side's counts stay comparable.
 * Deterministic (fixed xorshift seed). Used by bench/rules-throughput.ts and the NPD side-by-side bench.
 */
import { FAULT_LINES } from "../test/fixtures/log-lines.ts"
import { seededText } from "./seeded-text.ts"

export const BENIGN_TEMPLATES = [
  "eth0: renamed from veth{h}",
  "IPv6: ADDRCONF(NETDEV_CHANGE): eni{h}: link becomes ready",
  "cni0: port {n}(veth{h}) entered blocking state",
  "cni0: port {n}(veth{h}) entered forwarding state",
  "device veth{h} entered promiscuous mode",
  "overlayfs: idmapped layers are currently not supported",
  "EXT4-fs (nvme1n1p{n}): mounted filesystem with ordered data mode. Quota mode: none.",
  "XFS (nvme0n1p1): Ending clean mount",
  'audit: type=1400 audit({n}.{n}:{n}): apparmor="STATUS" operation="profile_load" name="cri-containerd.apparmor.d" pid={n}',
  "systemd[1]: Started cri-containerd-{h}.scope - libcontainer container {h}.",
  "pci 0000:{x}:00.0: [1d0f:efa1] type 00 class 0x020000",
  "nvme nvme{n}: {n}/0/0 default/read/poll queues",
  "ena 0000:00:05.0 eth{n}: Local page cache is disabled for less than 16 channels",
  "TCP: request_sock_TCP: Possible SYN flooding on port {n}. Sending cookies.  Check SNMP counters.",
  "Memory cgroup out of memory: Killed process {n} (java) total-vm:{n}kB, anon-rss:{n}kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:{n}kB oom_score_adj:{n}",
  "oom_reaper: reaped process {n} (java), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
  "NVRM: GPU at PCI:0000:{x}:00: GPU-{h}-{h}",
  "nvidia-nvswitch{n}: open (major={n})",
  "br-{h}: port {n}(veth{h}) entered disabled state",
  "IPVS: rr: TCP 10.100.{n}.{n}:443 - no destination available",
  "kauditd_printk_skb: {n} callbacks suppressed",
  "hrtimer: interrupt took {n} ns",
  "perf: interrupt took too long ({n} > {n}), lowering kernel.perf_event_max_sample_rate to {n}",
  "random: crng init done",
  "clocksource: timekeeping watchdog on CPU{n}: Marking clocksource 'tsc' as unstable because the skew is too large",
  "xfs filesystem being mounted at /var/lib/kubelet/pods/{h}/volumes supports timestamps until 2038 (0x7fffffff)",
  "Buffer I/O error on dev loop{n}, logical block {n}, async page read",
  "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x{h} offset:0x0 grain:32 syndrome:0x0)",
  "Lockdown: systemd: /dev/mem,kmem,port is restricted; see man kernel_lockdown.7",
  "process '/usr/bin/containerd-shim-runc-v2' started with executable stack"
]

const { pick, fill, rng } = seededText(0x2545f491)

const kernelFaults = FAULT_LINES.filter((f) => f.source === "dmesg").map((f) => f.text)

export const mixedKernelLog = (lines: number, faultRate = 0.01): string[] => {
  const texts: string[] = []
  for (let i = 0; i < lines; i++) {
    texts.push(rng() < faultRate ? pick(kernelFaults) : fill(pick(BENIGN_TEMPLATES)))
  }
  return texts
}
