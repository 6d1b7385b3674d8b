/**
 * Rule engine throughput over a mixed kernel log: mostly benign lines (the usual boot, network, storage,
 * container and audit chatter of a node) with ~1% fault lines. Prints lines/s for
 *   - the matcher alone (literal prefilter + regex on candidates),
 *   - the engine (matcher + occurrence windows + Detection building),
 *   - raw /dev/kmsg record parsing + engine (what the agent does per record),
 *   - a naive loop over every rule regex, for comparison.
 * Median of 9 round-robin passes. Goal: >= 1M lines/s for the engine. Run: node --conditions=source bench/rules-throughput.ts
 */
import { compileRules, LOG_RULES, makeLogRuleEngine } from "../src/rules/index.ts"
import { parseKmsgRecord } from "../src/sources/kmsg-record.ts"
import { FAULT_LINES } from "../test/fixtures/log-lines.ts"

const BENIGN_TEMPLATES = [
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

const rng = (() => {
  let s = 0x2545f491
  return () => {
    s ^= s << 13
    s ^= s >>> 17
    s ^= s << 5
    return (s >>> 0) / 0x100000000
  }
})()
const fillTemplate = (t: string) =>
  t
    .replace(/\{n\}/g, () => String(Math.floor(rng() * 100000)))
    .replace(/\{h\}/g, () => Math.floor(rng() * 0xffffffff).toString(16))
    .replace(/\{x\}/g, () =>
      Math.floor(rng() * 255)
        .toString(16)
        .padStart(2, "0")
    )

const kernelFaults = FAULT_LINES.filter((f) => f.source === "dmesg").map((f) => f.text)
const LINES = 200_000
const FAULT_RATE = 0.01
const texts: string[] = []
for (let i = 0; i < LINES; i++) {
  texts.push(
    rng() < FAULT_RATE
      ? kernelFaults[Math.floor(rng() * kernelFaults.length)]!
      : fillTemplate(BENIGN_TEMPLATES[Math.floor(rng() * BENIGN_TEMPLATES.length)]!)
  )
}
/** As the kernel writes record text to /dev/kmsg: bytes < 0x20, >= 0x7f and the backslash as \xNN. */
const escapeKmsg = (text: string) =>
  [...Buffer.from(text, "utf8")]
    .map((b) =>
      b < 0x20 || b >= 0x7f || b === 0x5c ? `\\x${b.toString(16).padStart(2, "0")}` : String.fromCharCode(b)
    )
    .join("")
const records = texts.map((t, i) => `6,${1000 + i},${5_000_000 + i * 10},-;${escapeKmsg(t)}`)
const avgBytes = Math.round(texts.reduce((n, t) => n + t.length, 0) / texts.length)

interface Pass {
  readonly name: string
  readonly run: () => number
  readonly rates: number[]
  hits: number
}
const passes: Pass[] = []
const pass = (name: string, run: () => number) => passes.push({ name, run, rates: [], hits: 0 })

/** Round-robin over the passes, so that load spikes and GC hit every variant alike. */
const measureAll = (rounds: number) => {
  for (const p of passes) p.run() // warm-up (JIT)
  for (let r = 0; r < rounds; r++)
    for (const p of passes) {
      const t0 = process.hrtime.bigint()
      p.hits = p.run()
      p.rates.push(LINES / (Number(process.hrtime.bigint() - t0) / 1e9))
    }
  for (const p of passes) {
    const rates = [...p.rates].sort((a, b) => a - b)
    const median = rates[Math.floor(rates.length / 2)]!
    console.log(
      `${p.name.padEnd(44)} ${(median / 1e6).toFixed(2).padStart(6)} M lines/s  (min ${(rates[0]! / 1e6).toFixed(2)}, max ${(rates.at(-1)! / 1e6).toFixed(2)}; ${p.hits} hits)`
    )
  }
}

console.log(
  `rules-throughput: ${LINES} kernel lines (avg ${avgBytes} bytes, ${(FAULT_RATE * 100).toFixed(0)}% faults), ${LOG_RULES.filter((r) => r.sources.includes("dmesg")).length} dmesg rules, node ${process.version}`
)
const matcher = compileRules()
pass("matcher.match (prefilter + regex)", () => {
  let hits = 0
  for (const t of texts) hits += matcher.match("dmesg", t).length
  return hits
})
pass("engine.process (match + windows + Detection)", () => {
  const engine = makeLogRuleEngine({}, matcher)
  let hits = 0
  for (let i = 0; i < texts.length; i++)
    hits += engine.process({ source: "dmesg", text: texts[i]!, timestampMs: i }).length
  return hits
})
pass("kmsg record parse + engine.process", () => {
  const engine = makeLogRuleEngine({}, matcher)
  let hits = 0
  for (const raw of records) {
    const r = parseKmsgRecord(raw)!
    hits += engine.process({ source: "dmesg", text: r.text, timestampMs: r.usecSinceBoot / 1000 }).length
  }
  return hits
})
const allRegexes = LOG_RULES.filter((r) => r.sources.includes("dmesg")).map((r) => r.pattern)
pass("naive: every rule regex on every line", () => {
  let hits = 0
  for (const t of texts) for (const re of allRegexes) if (re.test(t)) hits++
  return hits
})
measureAll(9)
