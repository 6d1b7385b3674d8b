import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { decodeConfig } from "../../src/config/load.ts"
import { efaCountersCheck } from "../../src/checks/efa-counters.ts"
import { interfacesCheck } from "../../src/checks/interfaces.ts"
import { ioDelaysCheck } from "../../src/checks/io-delays.ts"
import { ipForwardCheck } from "../../src/checks/ip-forward.ts"
import { ipamdCheck } from "../../src/checks/ipamd.ts"
import {
  environmentCheck,
  openFilesCheck,
  pidUsageCheck,
  zombiesCheck
} from "../../src/checks/kernel-limits.ts"
import { zramCheck } from "../../src/checks/zram.ts"
import { DEFAULT_EXCLUDED_INTERFACES } from "../../src/config/schema.ts"
import { makeHostRoot, procStat, reasons, runAt, type HostRoot } from "./host-root.ts"

const config = (() => {
  const r = decodeConfig({})
  if (r._tag !== "Success") throw new Error("defaults must decode")
  return r.success
})()
const K = config.monitors.kernel.thresholds
const MIN = 60_000

let host: HostRoot
beforeEach(() => {
  host = makeHostRoot()
})
afterEach(() => host.cleanup())

const addProcs = (n: number, state = "S", from = 100) => {
  for (let i = 0; i < n; i++) host.write(`proc/${from + i}/stat`, procStat(from + i, `p ${i}`, state))
}

describe("kernel limits", () => {
  it("ApproachingKernelPidMax at 70% of max(pid_max, threads-max)", async () => {
    host.write("proc/sys/kernel/pid_max", "10\n")
    host.write("proc/sys/kernel/threads-max", "20\n")
    addProcs(13)
    expect(await runAt(pidUsageCheck(host.files, K, MIN), host.files, 0)).toEqual([])
    addProcs(1, "S", 500)
    const f = await runAt(pidUsageCheck(host.files, K, MIN), host.files, 0)
    expect(reasons(f)).toEqual(["+ApproachingKernelPidMax"])
    expect(f[0]!._tag === "Detection" && f[0]!.message).toBe(
      "Approaching max number of PIDs. 14 of 20 total, 70.0%"
    )
  })

  it("ApproachingMaxOpenFiles from file-nr", async () => {
    host.write("proc/sys/fs/file-nr", "6999\t0\t10000\n")
    expect(await runAt(openFilesCheck(host.files, K, MIN), host.files, 0)).toEqual([])
    host.write("proc/sys/fs/file-nr", "7000\t0\t10000\n")
    const f = await runAt(openFilesCheck(host.files, K, MIN), host.files, 0)
    expect(f[0]).toMatchObject({
      reason: "ApproachingMaxOpenFiles",
      severity: "Event",
      conditionType: "KernelReady"
    })
  })

  it("ExcessiveZombieProcesses counts state Z (comm with spaces and parens)", async () => {
    addProcs(19, "Z")
    host.write("proc/900/stat", procStat(900, "weird) (name", "S"))
    expect(await runAt(zombiesCheck(host.files, K, MIN), host.files, 0)).toEqual([])
    host.write("proc/901/stat", procStat(901, "x) Z (y", "Z"))
    const f = await runAt(zombiesCheck(host.files, K, MIN), host.files, 0)
    expect(f[0]).toMatchObject({
      reason: "ExcessiveZombieProcesses",
      message: "Detected 20 zombie processes still running"
    })
  })

  it("LargeEnvironment per process; vanished or unreadable processes are skipped", async () => {
    host.write(
      "proc/10/environ",
      Buffer.from(Array.from({ length: 1001 }, (_, i) => `V${i}=x`).join("\0") + "\0")
    )
    host.write("proc/11/environ", Buffer.from(Array.from({ length: 1000 }, (_, i) => `V${i}=x`).join("\0")))
    host.mkdir("proc/12") // a kernel thread: no environ
    const f = await runAt(environmentCheck(host.files, K, MIN), host.files, 0)
    expect(reasons(f)).toEqual(["+LargeEnvironment@10"])
  })

  it("ZramHighUsage above 10% of disksize; empty devices skipped", async () => {
    host.write("sys/block/zram0/mm_stat", "2000 100 100 0 0 0 0 0\n")
    host.write("sys/block/zram0/disksize", "10000\n")
    host.write("sys/block/zram1/mm_stat", "0 0 0 0 0 0 0 0\n")
    host.write("sys/block/zram1/disksize", "10000\n")
    host.write("sys/block/sda/size", "1\n")
    expect(reasons(await runAt(zramCheck(host.files, K, MIN), host.files, 0))).toEqual([
      "+ZramHighUsage@zram0"
    ])
  })
})

describe("interfaces", () => {
  const iface = (name: string, flags: number, operstate: string) => {
    host.write(`sys/class/net/${name}/flags`, `0x${flags.toString(16)}\n`)
    host.write(`sys/class/net/${name}/operstate`, `${operstate}\n`)
    host.write(`sys/class/net/${name}/address`, "0a:00:00:00:00:01\n")
  }
  const LO = 0x9 | 0x40
  const ETH_UP = 0x1003
  const ETH_DOWN = 0x1002

  it("needs two consecutive bad samples, then resolves when the interface is back", async () => {
    iface("lo", LO, "unknown")
    iface("eth0", ETH_UP, "up")
    iface("eth1", ETH_DOWN, "down")
    const check = interfacesCheck(host.files, DEFAULT_EXCLUDED_INTERFACES, 5 * MIN)
    expect(await runAt(check, host.files, 0)).toEqual([])
    const second = await runAt(check, host.files, 5 * MIN)
    expect(reasons(second)).toEqual(["+InterfaceNotUp@eth1"])
    expect(second[0]).toMatchObject({
      severity: "Condition",
      message: 'Interface Name: "eth1", MAC: "0a:00:00:00:00:01" is not up'
    })
    iface("eth1", ETH_UP, "up")
    expect(reasons(await runAt(check, host.files, 10 * MIN))).toEqual(["-InterfaceNotUp@eth1"])
    expect(await runAt(check, host.files, 15 * MIN)).toEqual([])
  })

  it("InterfaceNotRunning for up-but-down links; empty bridges, tunnels, docker and excluded names never", async () => {
    iface("lo", LO, "unknown")
    iface("eth2", ETH_UP, "down")
    iface("br0", ETH_UP, "down")
    host.mkdir("sys/class/net/br0/bridge")
    host.mkdir("sys/class/net/br0/brif")
    iface("docker0", ETH_DOWN, "down")
    iface("ib0", ETH_DOWN, "down")
    iface("tunl0", 0x80, "down")
    const check = interfacesCheck(host.files, DEFAULT_EXCLUDED_INTERFACES, 5 * MIN)
    await runAt(check, host.files, 0)
    expect(reasons(await runAt(check, host.files, MIN))).toEqual(["+InterfaceNotRunning@eth2"])
  })

  it("a sample older than 10 minutes does not count as the first of two", async () => {
    iface("lo", LO, "unknown")
    iface("eth1", ETH_DOWN, "down")
    const check = interfacesCheck(host.files, [], 5 * MIN)
    await runAt(check, host.files, 0)
    expect(await runAt(check, host.files, 11 * MIN)).toEqual([])
  })

  it("MissingLoopbackInterface at once, resolved when loopback returns", async () => {
    iface("eth0", ETH_UP, "up")
    const check = interfacesCheck(host.files, [], 5 * MIN)
    expect(reasons(await runAt(check, host.files, 0))).toEqual(["+MissingLoopbackInterface"])
    iface("lo", LO, "unknown")
    expect(reasons(await runAt(check, host.files, MIN))).toEqual(["-MissingLoopbackInterface"])
  })
})

describe("IPAMD", () => {
  const installCni = () => host.mkdir("var/log/pods/kube-system_aws-node-abcde_1234/aws-vpc-cni-init")
  it("nothing without the VPC CNI (another CNI is installed)", async () => {
    const check = ipamdCheck(host.files, MIN)
    expect(reasons(await runAt(check, host.files, 0))).toEqual(["-IPAMDNotRunning"])
    expect(reasons(await runAt(check, host.files, MIN))).toEqual(["-IPAMDNotRunning"])
  })

  it("two consecutive misses report it; the process coming back resolves it", async () => {
    installCni()
    host.write("proc/1/comm", "systemd\n")
    const check = ipamdCheck(host.files, MIN)
    expect(await runAt(check, host.files, 0)).toEqual([])
    expect(reasons(await runAt(check, host.files, MIN))).toEqual(["+IPAMDNotRunning"])
    host.write("proc/4242/comm", "aws-k8s-agent\n")
    expect(reasons(await runAt(check, host.files, 2 * MIN))).toEqual(["-IPAMDNotRunning"])
  })

  it("finds it by cmdline too", async () => {
    installCni()
    host.write("proc/77/comm", "ld-linux\n")
    host.write("proc/77/cmdline", "/app/aws-k8s-agent\0--flag\0")
    const check = ipamdCheck(host.files, MIN)
    await runAt(check, host.files, 0)
    expect(reasons(await runAt(check, host.files, MIN))).toEqual(["-IPAMDNotRunning"])
  })
})

describe("ip_forward", () => {
  it("NetworkSysctl when net.ipv4.ip_forward is not 1", async () => {
    host.write("proc/sys/net/ipv4/ip_forward", "1\n")
    expect(await runAt(ipForwardCheck(host.files, MIN), host.files, 0)).toEqual([])
    host.write("proc/sys/net/ipv4/ip_forward", "0\n")
    expect(reasons(await runAt(ipForwardCheck(host.files, MIN), host.files, 0))).toEqual([
      "+NetworkSysctl@net.ipv4.ip_forward"
    ])
  })
})

describe("I/O delays", () => {
  it("reports the increase since the previous sample of the same process, never a first sample", async () => {
    host.write("proc/300/stat", procStat(300, "postgres", "D", 5_000_000))
    const check = ioDelaysCheck(host.files, 10, 10 * MIN)
    expect(await runAt(check, host.files, 0)).toEqual([])
    host.write("proc/300/stat", procStat(300, "postgres", "D", 5_000_999))
    expect(await runAt(check, host.files, 10 * MIN)).toEqual([])
    host.write("proc/300/stat", procStat(300, "postgres", "D", 5_002_000))
    const f = await runAt(check, host.files, 20 * MIN)
    expect(f[0]).toMatchObject({
      reason: "IODelays",
      message: "Process postgres (PID 300) incurred 10.0 seconds of I/O delay"
    })
  })

  it("a reused pid with another comm starts over", async () => {
    host.write("proc/301/stat", procStat(301, "a", "S", 0))
    const check = ioDelaysCheck(host.files, 10, 10 * MIN)
    await runAt(check, host.files, 0)
    host.write("proc/301/stat", procStat(301, "b", "S", 100_000))
    expect(await runAt(check, host.files, MIN)).toEqual([])
  })
})

describe("EFA counters", () => {
  const efa = (counter: string, value: number) => {
    host.write("sys/class/infiniband/rdmap0s6/device/vendor", "0x1d0f\n")
    host.write("sys/class/infiniband/rdmap0s6/device/device", "0xefa1\n")
    host.write(`sys/class/infiniband/rdmap0s6/ports/1/hw_counters/${counter}`, `${value}\n`)
  }
  it("a long-lived node's totals never fire on the first sample; a burst beyond the budget does", async () => {
    efa("rdma_read_wr_err", 1_000_000)
    efa("retrans_pkts", 5_000_000)
    const check = efaCountersCheck(host.files, MIN)
    expect(await runAt(check, host.files, 0)).toEqual([])
    efa("rdma_read_wr_err", 1_000_050)
    expect(await runAt(check, host.files, 1000)).toEqual([])
    efa("rdma_read_wr_err", 1_000_300)
    const f = await runAt(check, host.files, 2000)
    expect(reasons(f)).toEqual(["+EFAErrorMetric@rdmap0s6:1/rdma_read_wr_err"])
    expect(f[0]).toMatchObject({
      message: "rdma_read_wr_err increased from 1000050 to 1000300 for device:port [rdmap0s6:1]"
    })
  })
  it("ignores non-EFA InfiniBand devices", async () => {
    host.write("sys/class/infiniband/mlx5_0/device/vendor", "0x15b3\n")
    host.write("sys/class/infiniband/mlx5_0/device/device", "0x101b\n")
    host.write("sys/class/infiniband/mlx5_0/ports/1/hw_counters/rx_drops", "0\n")
    const check = efaCountersCheck(host.files, MIN)
    await runAt(check, host.files, 0)
    host.write("sys/class/infiniband/mlx5_0/ports/1/hw_counters/rx_drops", "999999\n")
    expect(await runAt(check, host.files, 1000)).toEqual([])
  })
})
