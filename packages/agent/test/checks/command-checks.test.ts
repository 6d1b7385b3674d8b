import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { clockSyncCheck, parseNtpSynchronized } from "../../src/checks/clock-sync.ts"
import { containerdDeprecationsCheck, recentDeprecations } from "../../src/checks/containerd-deprecations.ts"
import {
  decodeEbsStats,
  EBS_STATS_MAGIC,
  ebsPerformanceCheck,
  volumeId
} from "../../src/checks/ebs-performance.ts"
import { enaAllowancesCheck, parseEthtoolStats } from "../../src/checks/ena-allowances.ts"
import { iptablesCheck, iptablesFindings, tokenize } from "../../src/checks/iptables.ts"
import {
  parseSystemctlShow,
  systemdRestartsCheck,
  unitReasonName
} from "../../src/checks/systemd-restarts.ts"
import {
  parseAverageFreeExtent,
  xfsDevices,
  xfsFragmentationCheck
} from "../../src/checks/xfs-fragmentation.ts"
import { isReasonCode } from "@nodemend/reason-codes"
import { makeHostRoot, reasons, runAt, type HostRoot } from "./host-root.ts"
import { recordedRunner } from "./recorded-runner.ts"

const MIN = 60_000
let host: HostRoot
beforeEach(() => {
  host = makeHostRoot()
})
afterEach(() => host.cleanup())

// `ethtool -S eth0` on an ENA interface, in the format the EC2 user guide shows
// ("Monitor network performance for ENA settings").
const ethtool = (bwIn: number, pps = 0) => `NIC statistics:
     tx_timeout: 0
     suspend: 0
     bw_in_allowance_exceeded: ${bwIn}
     bw_out_allowance_exceeded: 0
     pps_allowance_exceeded: ${pps}
     conntrack_allowance_exceeded: 0
     linklocal_allowance_exceeded: 0
     conntrack_allowance_available: 136812
     queue_0_tx_cnt: 26
`

describe("ENA allowances (ethtool -S)", () => {
  it("parses the statistics", () => {
    const s = parseEthtoolStats(ethtool(7, 3))
    expect(s.get("bw_in_allowance_exceeded")).toBe(7)
    expect(s.get("pps_allowance_exceeded")).toBe(3)
    expect(s.get("queue_0_tx_cnt")).toBe(26)
  })

  it("keeps its tracker across ticks: first sample records, a jump beyond the burst fires", async () => {
    host.link("sys/class/net/eth0/device/driver", "../../../../bus/pci/drivers/ena")
    host.link("sys/class/net/lo/device/driver", "../../../../bus/pci/drivers/virtio_net")
    let bwIn = 1_000_000
    const runner = recordedRunner((cmd, args) =>
      cmd === "ethtool" && args[1] === "eth0" ? { stdout: ethtool(bwIn) } : "missing"
    )
    const check = enaAllowancesCheck(host.files, runner, 5 * MIN)
    expect(await runAt(check, host.files, 0)).toEqual([])
    bwIn += 100
    expect(await runAt(check, host.files, 5 * MIN)).toEqual([])
    bwIn += 200
    const f = await runAt(check, host.files, 10 * MIN)
    expect(reasons(f)).toEqual(["+BandwidthInExceeded@eth0"])
    expect(f[0]).toMatchObject({
      severity: "Event",
      message: 'bw_in_allowance_exceeded increased on interface "eth0" from 1000100 to 1000300'
    })
    expect(runner.calls).toEqual(["ethtool -S eth0", "ethtool -S eth0", "ethtool -S eth0"])
  })

  // NMA's reason and burst per counter (reference 2.5), written out here rather than read from the check.
  it.each([
    ["bw_in_allowance_exceeded", "BandwidthInExceeded", 180],
    ["bw_out_allowance_exceeded", "BandwidthOutExceeded", 100],
    ["conntrack_allowance_exceeded", "ConntrackExceeded", 100],
    ["linklocal_allowance_exceeded", "LinkLocalExceeded", 100],
    ["pps_allowance_exceeded", "PPSExceeded", 320]
  ] as const)("%s: an increase of its burst passes, one more fires %s", async (stat, reason, burst) => {
    host.link("sys/class/net/eth0/device/driver", "../../../../bus/pci/drivers/ena")
    const values: Record<string, number> = {
      bw_in_allowance_exceeded: 5000,
      bw_out_allowance_exceeded: 6000,
      pps_allowance_exceeded: 7000,
      conntrack_allowance_exceeded: 8000,
      linklocal_allowance_exceeded: 9000
    }
    const stats = () =>
      `NIC statistics:\n${Object.entries(values)
        .map(([k, v]) => `     ${k}: ${v}`)
        .join("\n")}\n     conntrack_allowance_available: 136812\n`
    const check = enaAllowancesCheck(
      host.files,
      recordedRunner(() => ({ stdout: stats() })),
      5 * MIN
    )
    expect(await runAt(check, host.files, 0)).toEqual([])
    const start = values[stat]!
    values[stat] = start + burst
    expect(await runAt(check, host.files, 1000)).toEqual([])
    // One second refills 1/600 of a token: the next increase is beyond the budget.
    values[stat] = start + burst + 1
    const f = await runAt(check, host.files, 2000)
    expect(reasons(f)).toEqual([`+${reason}@eth0`])
    expect(f[0]).toMatchObject({
      conditionType: "NetworkingReady",
      severity: "Event",
      message: `${stat} increased on interface "eth0" from ${start + burst} to ${start + burst + 1}`
    })
  })

  it("exit 94 (no statistics) and a missing ethtool are tolerated", async () => {
    host.link("sys/class/net/eth0/device/driver", "../../../../bus/pci/drivers/ena")
    const none = recordedRunner(() => ({ stdout: "", exitCode: 94 }))
    expect(await runAt(enaAllowancesCheck(host.files, none, MIN), host.files, 0)).toEqual([])
    const missing = recordedRunner(() => "missing")
    expect(await runAt(enaAllowancesCheck(host.files, missing, MIN), host.files, 0)).toEqual([])
  })
})

// iptables-save output as kube-proxy and the VPC CNI write it.
const IPTABLES = `# Generated by iptables-save v1.8.4 on Mon Nov 30 05:00:00 2026
*filter
:INPUT ACCEPT [0:0]
:KUBE-FIREWALL - [0:0]
-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP
-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP
-A KUBE-SERVICES -d 10.100.5.5/32 -p tcp -m comment --comment "default/svc:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable
-A cali-INPUT -j DROP
-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j DROP
-A MY-CHAIN -j REJECT --reject-with icmp-host-prohibited
COMMIT
*nat
-A PREROUTING -p tcp -m tcp --dport 10250 -j DNAT --to-destination 10.0.0.9:10250
COMMIT
`

// Captured from iptables v1.8.9 (nf_tables) on Debian 12 (real-commands.test.ts makes the same rules):
// iptables-save adds `-m tcp` and the default `--reject-with`, writes `!` before the option it inverts,
// and quotes a comment with spaces, escaping its inner quotes.
const IPTABLES_1_8_9 = `# Generated by iptables-save v1.8.9 (nf_tables) on Mon Nov 30 10:40:21 2026
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:KUBE-FIREWALL - [0:0]
-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j DROP
-A INPUT ! -s 192.168.0.0/16 -p udp -j REJECT --reject-with icmp-host-prohibited
-A INPUT -m comment --comment "-j DROP \\"quoted\\" x" -j ACCEPT
-A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP
COMMIT
# Completed on Mon Nov 30 10:40:21 2026
# Generated by iptables-save v1.8.9 (nf_tables) on Mon Nov 30 10:40:21 2026
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -p tcp -m tcp --dport 10250 -j DNAT --to-destination 10.0.0.9:10250
COMMIT
# Completed on Mon Nov 30 10:40:21 2026
`

describe("iptables", () => {
  it("reads iptables-save v1.8.9 (nf_tables) output as it really is", () => {
    const f = iptablesFindings(IPTABLES_1_8_9, new Set(), 0)
    expect(f.map((x) => [x.reason, x.subject])).toEqual([
      ["UnexpectedRejectRule", "-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j DROP"],
      [
        "UnexpectedRejectRule",
        "-A INPUT ! -s 192.168.0.0/16 -p udp -j REJECT --reject-with icmp-host-prohibited"
      ],
      ["PortConflict", "-A PREROUTING -p tcp -m tcp --dport 10250 -j DNAT --to-destination 10.0.0.9:10250"]
    ])
    expect(tokenize('-A INPUT -m comment --comment "-j DROP \\"quoted\\" x" -j ACCEPT')).toContain(
      '-j DROP "quoted" x'
    )
  })

  it("tokenizes quotes and escapes like iptables-save writes them", () => {
    expect(tokenize('-A X -m comment --comment "a \\"b\\" c" -j DROP')).toEqual([
      "-A",
      "X",
      "-m",
      "comment",
      "--comment",
      'a "b" c',
      "-j",
      "DROP"
    ])
  })
  it("reports reject rules outside the allowlist and a DNAT of port 10250", () => {
    const f = iptablesFindings(IPTABLES, new Set(["filter/MY-CHAIN"]), 0)
    expect(f.map((x) => x.reason)).toEqual(["UnexpectedRejectRule", "PortConflict"])
    expect(f[0]).toMatchObject({
      message:
        'Found an unexpected iptables reject rule: "-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j DROP"'
    })
  })
  it("reads iptables-legacy-save too when iptables-save (nf_tables) warns that legacy tables are present", async () => {
    // Captured from iptables v1.8.9 (nf_tables) on Debian 12 after `iptables-legacy -A INPUT -s 10.9.0.0/16
    // -j DROP`: iptables-save prints nothing on stdout, this line on stderr, and exits 0.
    const warning = "# Warning: iptables-legacy tables present, use iptables-legacy-save to see them\n"
    const legacy = `# Generated by iptables-save v1.8.9 on Mon Nov 30 10:46:01 2026
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A INPUT -s 10.9.0.0/16 -j DROP
COMMIT
# Completed on Mon Nov 30 10:46:01 2026
`
    const runner = recordedRunner((cmd) =>
      cmd === "iptables-save"
        ? { stdout: "", stderr: warning }
        : cmd === "iptables-legacy-save"
          ? { stdout: legacy }
          : { stdout: "" }
    )
    const f = await runAt(iptablesCheck(runner, [], MIN), host.files, 0)
    expect(f.map((x) => x.subject)).toEqual(["-A INPUT -s 10.9.0.0/16 -j DROP"])
    expect(runner.calls).toEqual(["iptables-save", "iptables-legacy-save", "ip6tables-save"])
  })

  it("runs iptables-save and ip6tables-save", async () => {
    const runner = recordedRunner((cmd) => (cmd === "iptables-save" ? { stdout: IPTABLES } : { stdout: "" }))
    const f = await runAt(iptablesCheck(runner, [], MIN), host.files, 0)
    expect(f.map((x) => x.reason)).toEqual(["UnexpectedRejectRule", "UnexpectedRejectRule", "PortConflict"])
    expect(runner.calls).toEqual(["iptables-save", "ip6tables-save"])
  })
})

describe("systemd restarts", () => {
  const show = (kubelet: number, persistenced: number) =>
    `NRestarts=${kubelet}\nId=kubelet.service\n\nNRestarts=${persistenced}\nId=nvidia-persistenced.service\n\nId=foo.socket\n`
  it("parses systemctl show blocks and names the reason like NMA", () => {
    expect([...parseSystemctlShow(show(1, 2))]).toEqual([
      ["kubelet", 1],
      ["nvidia-persistenced", 2]
    ])
    expect(unitReasonName("nvidia-persistenced")).toBe("Nvidia-Persistenced")
    expect(isReasonCode(`${unitReasonName("nvidia-persistenced")}RepeatedRestart`)).toBe(true)
  })
  it("restarts before the agent started never fire; growth beyond the threshold does", async () => {
    let k = 10
    const runner = recordedRunner(() => ({ stdout: show(k, 0) }))
    const check = systemdRestartsCheck(runner, 3, MIN)
    expect(await runAt(check, host.files, 0)).toEqual([])
    expect(await runAt(check, host.files, MIN)).toEqual([])
    k = 11
    expect(reasons(await runAt(check, host.files, 2 * MIN))).toEqual(["+KubeletRepeatedRestart@kubelet"])
  })
})

describe("clock sync (timedatectl)", () => {
  it("parses NTPSynchronized", () => {
    expect(parseNtpSynchronized("yes\n")).toBe(true)
    expect(parseNtpSynchronized("no\n")).toBe(false)
    expect(parseNtpSynchronized("")).toBeUndefined()
  })
  it("ClockUnsynchronized only on an explicit no; silent when timedatectl is unavailable", async () => {
    expect(
      reasons(
        await runAt(
          clockSyncCheck(
            recordedRunner(() => ({ stdout: "no\n" })),
            MIN
          ),
          host.files,
          0
        )
      )
    ).toEqual(["+ClockUnsynchronized"])
    expect(
      await runAt(
        clockSyncCheck(
          recordedRunner(() => ({ stdout: "yes\n" })),
          MIN
        ),
        host.files,
        0
      )
    ).toEqual([])
    expect(
      await runAt(
        clockSyncCheck(
          recordedRunner(() => "missing"),
          MIN
        ),
        host.files,
        0
      )
    ).toEqual([])
    expect(
      await runAt(
        clockSyncCheck(
          recordedRunner(() => ({ stdout: "", exitCode: 1 })),
          MIN
        ),
        host.files,
        0
      )
    ).toEqual([])
  })
})

describe("containerd deprecations (ctr deprecations list --format json)", () => {
  const now = Date.parse("2026-11-30T05:00:00Z")
  const out = JSON.stringify([
    {
      id: "io.containerd.deprecation/pull-schema-1-image",
      message: "Schema 1 images are deprecated",
      lastOccurrence: "2026-11-30T04:30:00Z"
    },
    { id: "io.containerd.deprecation/old", message: "old", lastOccurrence: "2026-11-30T03:00:00Z" }
  ])
  it("reports deprecations seen within the last hour", async () => {
    expect(recentDeprecations(out, now).map((d) => d.id)).toEqual([
      "io.containerd.deprecation/pull-schema-1-image"
    ])
    expect(recentDeprecations("null", now)).toEqual([])
    expect(recentDeprecations("not json", now)).toEqual([])
    const f = await runAt(
      containerdDeprecationsCheck(
        recordedRunner(() => ({ stdout: out })),
        MIN
      ),
      host.files,
      now
    )
    expect(f[0]).toMatchObject({
      reason: "DeprecatedContainerdConfiguration",
      message: "io.containerd.deprecation/pull-schema-1-image: Schema 1 images are deprecated"
    })
  })
})

describe("XFS fragmentation (xfs_db freesp -s)", () => {
  const mountinfo = `22 1 259:1 / / rw,noatime shared:1 - xfs /dev/nvme0n1p1 rw,attr2
30 22 259:3 / /data rw shared:2 - xfs /dev/nvme1n1 rw
31 22 259:3 / /data2 rw shared:2 - xfs /dev/nvme1n1 rw
40 22 0:5 / /proc rw - proc proc rw
`
  const freesp = (avg: string) => `   from      to extents  blocks    pct
      1       1    1000    1000   5.00
total free extents 1000
total free blocks 20000
average free extent size ${avg}
`
  it("lists XFS devices once and parses the average", () => {
    expect(xfsDevices(mountinfo)).toEqual(["/dev/nvme0n1p1", "/dev/nvme1n1"])
    expect(parseAverageFreeExtent(freesp("12.5"))).toBe(12.5)
  })
  it("reports small averages; a failing device is skipped, not the cycle", async () => {
    host.write("proc/1/mountinfo", mountinfo)
    const runner = recordedRunner((_c, args) =>
      args[3] === "/dev/nvme0n1p1" ? "missing" : { stdout: freesp("3.2") }
    )
    const f = await runAt(xfsFragmentationCheck(host.files, runner, 16, MIN), host.files, 0)
    expect(reasons(f)).toEqual(["+XFSSmallAverageClusterSize@/dev/nvme1n1"])
  })
})

describe("EBS performance (NVMe log page 0xD0)", () => {
  const page = (volIops: bigint, volTp = 0n, instIops = 0n, instTp = 0n) => {
    const b = Buffer.alloc(4096)
    b.writeUInt32LE(EBS_STATS_MAGIC, 0)
    b.writeBigUInt64LE(123n, 8) // total_read_ops
    b.writeBigUInt64LE(volIops, 56)
    b.writeBigUInt64LE(volTp, 64)
    b.writeBigUInt64LE(instIops, 72)
    b.writeBigUInt64LE(instTp, 80)
    return b
  }
  it("decodes the four exceeded-time counters and rejects a page without the magic", () => {
    expect(decodeEbsStats(page(1n, 2n, 3n, 4n))).toEqual([1, 2, 3, 4])
    expect(decodeEbsStats(Buffer.alloc(4096))).toBeUndefined()
    expect(volumeId("vol0123456789abcdef0")).toBe("vol-0123456789abcdef0")
  })
  it("reports an increase above the threshold since the previous sample, never the first", async () => {
    host.write("sys/class/nvme/nvme1/model", "Amazon Elastic Block Store              \n")
    host.write("sys/class/nvme/nvme1/serial", "vol0123456789abcdef0\n")
    host.write("sys/class/nvme/nvme0/model", "Amazon EC2 NVMe Instance Storage\n")
    let iops = 9_000_000_000n
    const runner = recordedRunner(() => ({ stdout: page(iops) }))
    const check = ebsPerformanceCheck(host.files, runner, 50, 10 * MIN)
    expect(await runAt(check, host.files, 0)).toEqual([])
    iops += 60_000_000n
    const f = await runAt(check, host.files, 10 * MIN)
    expect(reasons(f)).toEqual(["+EBSVolumeIOPSExceeded@vol-0123456789abcdef0"])
    expect(runner.calls).toEqual([
      "nvme get-log /dev/nvme1 --log-id=0xd0 --log-len=4096 --raw-binary",
      "nvme get-log /dev/nvme1 --log-id=0xd0 --log-len=4096 --raw-binary"
    ])
  })
  // Offsets of the "Amazon EBS detailed performance statistics" counters, and NMA's reason and message
  // for each (reference 2.7), written out here rather than read from the check.
  it.each([
    [0, "EBSVolumeIOPSExceeded", "exceeded configured IOPS"],
    [1, "EBSVolumeThroughputExceeded", "exceeded configured throughput"],
    [2, "EBSInstanceIOPSExceeded", "exceeded instance IOPS"],
    [3, "EBSInstanceThroughputExceeded", "exceeded instance throughput"]
  ] as const)(
    "counter %i above the threshold fires %s; at the threshold it is silent",
    async (i, reason, what) => {
      host.write("sys/class/nvme/nvme2/model", "Amazon Elastic Block Store              \n")
      host.write("sys/class/nvme/nvme2/serial", "vol0fedcba9876543210\n")
      const counters = [1_000_000_000n, 2_000_000_000n, 3_000_000_000n, 4_000_000_000n]
      const runner = recordedRunner(() => ({
        stdout: page(counters[0]!, counters[1]!, counters[2]!, counters[3]!)
      }))
      const check = ebsPerformanceCheck(host.files, runner, 50, 10 * MIN)
      expect(await runAt(check, host.files, 0)).toEqual([])
      counters[i] = counters[i]! + 50_000_000n
      expect(await runAt(check, host.files, 10 * MIN)).toEqual([])
      counters[i] = counters[i]! + 61_500_000n
      const f = await runAt(check, host.files, 20 * MIN)
      expect(reasons(f)).toEqual([`+${reason}@vol-0fedcba9876543210`])
      expect(f[0]).toMatchObject({
        conditionType: "StorageReady",
        severity: "Event",
        message: `Volume vol-0fedcba9876543210 (nvme2) reported ${what} for 61.5s`
      })
    }
  )
})
