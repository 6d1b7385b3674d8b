/**
 * The command checks against the real commands (issue #8: they were tested on recorded output only). Each
 * test makes a throwaway host with `unshare` (namespace.ts), puts a real fault in it with the real tools
 * (iptables, ip, mount, xfs_io, ...), and runs the production check, built by the production registry
 * with the production CommandRunner, in that namespace. Where a tool or the namespaces are unavailable the
 * test is skipped with the reason in its name; on Debian 12 as root with iproute2, iptables, ethtool,
 * xfsprogs, nvme-cli, systemd and util-linux installed they all run.
 *
 * What cannot be made real here is simulated in the host root the check reads (`filesRoot`), never in the
 * command: that an interface is bound to the `ena` driver, that the VPC CNI is installed, that the OS is
 * Ubuntu, that an NVMe controller is an EBS volume. The commands the checks run are always the real ones.
 */
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { parseEthtoolStats } from "../../src/checks/ena-allowances.ts"
import { macPolicyFinding } from "../../src/checks/mac-address-policy.ts"
import { parseAverageFreeExtent } from "../../src/checks/xfs-fragmentation.ts"
import type { Finding } from "../../src/model.ts"
import { type HostRoot, makeHostRoot, reasons } from "./host-root.ts"
import {
  hasCommand,
  type LogLine,
  type Namespace,
  namespacesPermitted,
  startNamespace,
  worksInNamespace
} from "./namespace.ts"

const MIN = 60_000
/** Why a test cannot run on this machine (undefined: it can), checked once when the file loads. */
type Why = string | undefined
const all = (...whys: Why[]): Why => whys.find((w) => w !== undefined)
const NAMESPACES: Why = namespacesPermitted
  ? undefined
  : "cannot make net/mount/pid namespaces here (needs root, unshare, nsenter)"
const commands = (...names: string[]): Why => {
  const absent = names.filter((c) => !hasCommand(c))
  return all(NAMESPACES, absent.length > 0 ? `not on PATH: ${absent.join(", ")}` : undefined)
}
/** What the kernel allows: tried once in throwaway namespaces. */
const kernel = (prior: Why, script: string, what: string): Why =>
  all(prior, worksInNamespace(script) ? undefined : what)
const VETH = kernel(commands("ip"), "ip link add v0 type veth peer name v1", "no veth pairs in this kernel")
const NFT = kernel(
  commands("iptables", "ip6tables", "iptables-save", "ip6tables-save"),
  "iptables -A INPUT -j ACCEPT && ip6tables -A INPUT -j ACCEPT",
  "iptables (nf_tables) does not work in this kernel"
)
const LEGACY = kernel(
  all(NFT, commands("iptables-legacy", "ip6tables-legacy", "iptables-legacy-save", "ip6tables-legacy-save")),
  "iptables-legacy -A INPUT -j ACCEPT && ip6tables-legacy -A INPUT -j ACCEPT",
  "iptables-legacy does not work in this kernel (x_tables)"
)
// 300 MiB is mkfs.xfs's minimum; the image stays sparse
const XFS = kernel(
  commands("mkfs.xfs", "xfs_db", "xfs_io", "xfs_freeze", "fallocate", "findmnt", "truncate"),
  'd=$(mktemp -d) && trap "umount $d/m; rm -rf $d" EXIT && truncate -s 300M $d/i && mkfs.xfs -q $d/i && mkdir $d/m && mount -o loop $d/i $d/m',
  "cannot loop-mount an XFS image here"
)
/** These tests are about systemd being unreachable (containers, CI); where it runs they would ask it. */
const SYSTEMD_ABSENT: Why = existsSync("/run/systemd/system")
  ? "systemd runs here; these tests are about it being unreachable"
  : undefined

/** `it.skipIf`, with the reason in the test's name when it is skipped. */
const realIt =
  (why: Why) =>
  (name: string, fn: () => Promise<void>): void =>
    it.skipIf(why !== undefined)(why === undefined ? name : `${name} [skipped: ${why}]`, fn)

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c()
})
const namespace = async (): Promise<Namespace> => {
  const ns = await startNamespace()
  cleanups.push(() => ns.close())
  return ns
}
const hostRoot = (): HostRoot => {
  const h = makeHostRoot()
  cleanups.push(() => h.cleanup())
  return h
}
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), "nodemend-real-"))
  cleanups.push(() => rmSync(d, { recursive: true, force: true }))
  return d
}
const warnings = (logs: readonly LogLine[]) =>
  logs.filter((l) => l.level === "Warn").map((l) => JSON.stringify(l.message))
const subjects = (findings: readonly Finding[]) => findings.map((f) => [f.reason, f.subject])

describe("iptables: real iptables-save / ip6tables-save", () => {
  realIt(NFT)(
    "reports unexpected reject rules and a DNAT of 10250; kube-proxy's and allowlisted rules are not reported",
    async () => {
      const ns = await namespace()
      await ns.build("iptables", {
        config: { monitors: { networking: { allowedIPTablesChains: ["filter/MY-CHAIN"] } } }
      })
      expect(await ns.tick(0)).toEqual({ findings: [], logs: [] })
      await ns.sh(`
        set -e
        iptables -A INPUT -s 10.0.0.0/8 -p tcp --dport 22 -j DROP
        iptables -A INPUT ! -s 192.168.0.0/16 -p udp -j REJECT --reject-with icmp-host-prohibited
        iptables -A INPUT -m comment --comment "-j DROP \\"quoted\\" text" -j ACCEPT
        iptables -N KUBE-FIREWALL
        iptables -A KUBE-FIREWALL -m comment --comment "kubernetes firewall for dropping marked packets" -m mark --mark 0x8000/0x8000 -j DROP
        iptables -N KUBE-SERVICES
        iptables -A KUBE-SERVICES -d 10.100.5.5/32 -p tcp -m comment --comment "default/svc:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable
        iptables -N MY-CHAIN
        iptables -A MY-CHAIN -j DROP
        iptables -t nat -A PREROUTING -p tcp --dport 10250 -j DNAT --to-destination 10.0.0.9:10250
        ip6tables -A INPUT -p tcp --dport 80 -j REJECT
      `)
      const { findings, logs } = await ns.tick(5 * MIN)
      expect(logs).toEqual([])
      // iptables-save writes the rules back in its own canonical form (`-m tcp`, the default --reject-with)
      expect(subjects(findings)).toEqual([
        ["UnexpectedRejectRule", "-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j DROP"],
        [
          "UnexpectedRejectRule",
          "-A INPUT ! -s 192.168.0.0/16 -p udp -j REJECT --reject-with icmp-host-prohibited"
        ],
        ["PortConflict", "-A PREROUTING -p tcp -m tcp --dport 10250 -j DNAT --to-destination 10.0.0.9:10250"],
        [
          "UnexpectedRejectRule",
          "-A INPUT -p tcp -m tcp --dport 80 -j REJECT --reject-with icmp6-port-unreachable"
        ]
      ])
      expect(findings[0]).toMatchObject({
        severity: "Event",
        message:
          'Found an unexpected iptables reject rule: "-A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j DROP"'
      })
      await ns.sh("iptables -F INPUT && iptables -t nat -F PREROUTING && ip6tables -F INPUT")
      expect(await ns.tick(10 * MIN)).toEqual({ findings: [], logs: [] })
    }
  )
})

describe("iptables: rules made with iptables-legacy on an nf_tables host", () => {
  realIt(LEGACY)(
    "are read from iptables-legacy-save when iptables-save says legacy tables are present",
    async () => {
      const ns = await namespace()
      await ns.build("iptables")
      await ns.sh(`
        set -e
        iptables-legacy -A INPUT -s 10.9.0.0/16 -j DROP
        ip6tables-legacy -A INPUT -p tcp --dport 80 -j REJECT
        iptables -A INPUT -s 10.8.0.0/16 -j DROP
      `)
      // what iptables-save itself shows: only its own rule, and a warning on stderr
      expect(await ns.sh("iptables-save 2>&1 >/dev/null")).toContain("iptables-legacy tables present")
      expect(await ns.sh("iptables-save | grep -c '^-A' || true")).toBe("1\n")
      const { findings, logs } = await ns.tick(0)
      expect(logs).toEqual([])
      expect(subjects(findings)).toEqual([
        ["UnexpectedRejectRule", "-A INPUT -s 10.8.0.0/16 -j DROP"],
        ["UnexpectedRejectRule", "-A INPUT -s 10.9.0.0/16 -j DROP"],
        [
          "UnexpectedRejectRule",
          "-A INPUT -p tcp -m tcp --dport 80 -j REJECT --reject-with icmp6-port-unreachable"
        ]
      ])
    }
  )
})

describe("iptables-mode: real iptables-legacy-save and iptables-nft-save (NPD's iptables-mode-monitor)", () => {
  realIt(LEGACY)(
    "nothing while one backend holds every rule; IPTablesVersionsMismatch once the other gets one too",
    async () => {
      const ns = await namespace()
      await ns.build("iptables-mode")
      await ns.sh("iptables-nft -A INPUT -s 10.8.0.0/16 -j DROP && ip6tables-nft -A INPUT -j ACCEPT")
      expect(await ns.tick(0)).toEqual({ findings: [], logs: [] })
      await ns.sh("iptables-legacy -A INPUT -s 10.9.0.0/16 -j DROP")
      const { findings, logs } = await ns.tick(60 * MIN)
      expect(logs).toEqual([])
      expect(findings.map((f) => f.reason)).toEqual(["IPTablesVersionsMismatch"])
      // NPD counts every line starting with `-` of both families; iptables-save prints no `-N` lines
      expect(findings[0]).toMatchObject({
        severity: "Event",
        message: "Found rules from both versions, iptables-legacy: 1 iptables-nft: 2"
      })
    }
  )
})

/**
 * Waits until the kernel shows these operstates: it applies a peer's carrier change to the other end of a veth
 * through linkwatch, up to a second later (seen on a fresh machine: v0 still "up" right after its peer went down,
 * so the next sample saw it down after the peer was up again).
 */
const operstates = async (ns: Namespace, want: Record<string, string>) => {
  const read = `for i in ${Object.keys(want).join(" ")}; do cat /sys/class/net/$i/operstate; done`
  let got = ""
  for (let i = 0; i < 100; i++) {
    got = (await ns.sh(read)).trim().split("\n").join(",")
    if (got === Object.values(want).join(",")) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(
    `operstates of ${Object.keys(want).join(",")}: ${got}, want ${Object.values(want).join(",")}`
  )
}

describe("interfaces: real links in a network namespace (/sys/class/net)", () => {
  realIt(VETH)(
    "a down loopback and a veth pair with one end down are reported on the second sample and resolve when up",
    async () => {
      const ns = await namespace()
      // A new network namespace starts with lo down. v0 is up but its peer v1 is down: v0 is UP without
      // carrier (operstate lowerlayerdown, InterfaceNotRunning), v1 is not UP (InterfaceNotUp).
      await ns.sh("ip link add v0 type veth peer name v1 && ip link set v0 up")
      await operstates(ns, { lo: "down", v0: "lowerlayerdown", v1: "down" })
      await ns.build("interfaces")
      const mac = (await ns.sh("cat /sys/class/net/v0/address")).trim()
      expect(await ns.tick(0)).toEqual({ findings: [], logs: [] })
      const down = await ns.tick(5 * MIN)
      expect(reasons(down.findings).sort()).toEqual([
        "+InterfaceNotRunning@v0",
        "+InterfaceNotUp@lo",
        "+InterfaceNotUp@v1"
      ])
      expect(down.findings.find((f) => f.subject === "v0")).toMatchObject({
        severity: "Condition",
        conditionType: "NetworkingReady",
        message: `Interface Name: "v0", MAC: "${mac}" is not up`
      })
      await ns.sh("ip link set lo up && ip link set v1 up")
      await operstates(ns, { lo: "unknown", v0: "up", v1: "up" })
      expect(reasons((await ns.tick(10 * MIN)).findings).sort()).toEqual([
        "-InterfaceNotRunning@v0",
        "-InterfaceNotUp@lo",
        "-InterfaceNotUp@v1"
      ])
      // down for one sample only: never reported
      await ns.sh("ip link set v1 down")
      await operstates(ns, { v0: "lowerlayerdown", v1: "down" })
      expect((await ns.tick(15 * MIN)).findings).toEqual([])
      await ns.sh("ip link set v1 up")
      await operstates(ns, { v0: "up", v1: "up" })
      expect((await ns.tick(20 * MIN)).findings).toEqual([])
    }
  )
})

describe("ip-routing: real ip rule / ip route", () => {
  const enis = (ips: { ip: string; primary: boolean }[]) =>
    JSON.stringify({
      ENIs: Object.fromEntries(
        ips.map(({ ip, primary }, i) => [
          `eni-${i}`,
          {
            IsPrimary: primary,
            [ip.includes(":") ? "IPv6Cidrs" : "AvailableIPv4Cidrs"]: {
              [ip.includes(":") ? "2001:db8::/64" : "10.0.1.0/24"]: {
                IPAddresses: {
                  [ip]: {
                    Address: ip,
                    IPAMKey: { networkName: "aws-cni", containerID: `c${i}`, ifName: "eth0" }
                  }
                }
              }
            }
          }
        ])
      )
    })
  const withVpcCni = () => {
    const h = hostRoot()
    h.mkdir("var/log/pods/kube-system_aws-node-x7k2p_0b6a/aws-vpc-cni-init")
    return h
  }

  realIt(VETH)(
    "IPv4: a pod IP without its rule, one without its route and a table without a default route are reported",
    async () => {
      const ns = await namespace()
      // /etc/hosts lists ::1 first for localhost (as many hosts do): the check must still reach IPAMD,
      // which listens on 127.0.0.1 only.
      const hosts = join(tempDir(), "hosts")
      writeFileSync(hosts, "::1 localhost\n127.0.0.1 localhost\n")
      await ns.sh(`
        set -e
        mount --bind ${hosts} /etc/hosts
        ip link set lo up
        ip link add v0 type veth peer name v1
        ip link set v0 up && ip link set v1 up
        ip addr add 10.0.0.10/24 dev v0
        ip rule add from all to 10.0.1.5 lookup main priority 512
        ip route add 10.0.1.5 dev v0 scope link
        ip rule add from 10.0.1.6 lookup 2 priority 1536
      `)
      await ns.serve(
        61679,
        "/v1/enis",
        enis([
          { ip: "10.0.1.5", primary: true },
          { ip: "10.0.1.6", primary: false },
          { ip: "10.0.1.7", primary: true }
        ])
      )
      await ns.build("ip-routing", { filesRoot: withVpcCni().root })
      const first = await ns.tick(0)
      expect(first.logs).toEqual([])
      expect(subjects(first.findings)).toEqual([
        ["MissingIPRoutes", "10.0.1.6"],
        ["MissingIPRules", "10.0.1.7"],
        ["MissingDefaultRoutes", "2"]
      ])
      expect(first.findings.map((f) => f._tag === "Detection" && f.message)).toEqual([
        "Pod IP 10.0.1.6 is missing secondary routes: Expected entry like `10.0.1.6 dev <dev> scope link`",
        "Pod IP 10.0.1.7 is missing rules: Expected entry like `from all to 10.0.1.7 lookup main`",
        "Missing default route rules for table 2: Expected entry like `default via <gateway-ip> dev <dev> table 2`"
      ])
      await ns.sh(`
        set -e
        ip route add 10.0.1.6 dev v0 scope link
        ip rule add from all to 10.0.1.7 lookup main priority 512
        ip route add default via 10.0.0.1 dev v0 table 2
      `)
      // 10.0.1.7 has its rule now, not yet its route
      expect(reasons((await ns.tick(5 * MIN)).findings)).toEqual(["+MissingIPRoutes@10.0.1.7"])
      await ns.sh("ip route add 10.0.1.7 dev v0 scope link")
      expect(await ns.tick(10 * MIN)).toEqual({ findings: [], logs: [] })
    }
  )

  realIt(VETH)("IPv6: a pod IP with its rule but no route is reported", async () => {
    // No IPv4 address but loopback here: `localhost` would not even resolve (AI_ADDRCONFIG).
    const ns = await namespace()
    await ns.sh(`
      set -e
      ip link set lo up
      ip link add v0 type veth peer name v1
      ip link set v0 up && ip link set v1 up
      ip -6 rule add from all to 2001:db8::5 lookup main priority 512
      ip -6 route add 2001:db8::5 dev v0
      ip -6 rule add from all to 2001:db8::6 lookup main priority 512
    `)
    await ns.serve(
      61679,
      "/v1/enis",
      enis([
        { ip: "2001:db8::5", primary: true },
        { ip: "2001:db8::6", primary: true }
      ])
    )
    await ns.build("ip-routing", { filesRoot: withVpcCni().root })
    const { findings, logs } = await ns.tick(0)
    expect(logs).toEqual([])
    expect(findings.map((f) => f._tag === "Detection" && f.message)).toEqual([
      "Pod IP 2001:db8::6 is missing routes: Expected entry like `2001:db8::6 dev <dev> metric 1024 pref medium`"
    ])
    // With the veth's peer down the route reads `... metric 1024 linkdown pref medium`: still there.
    await ns.sh(
      "ip link set v1 down && ip -6 route show table all | grep -q 'metric 1024 linkdown pref medium'"
    )
    expect(reasons((await ns.tick(5 * MIN)).findings)).toEqual(["+MissingIPRoutes@2001:db8::6"])
  })
})

describe("ENA allowances: real ethtool -S", () => {
  realIt(all(VETH, commands("ethtool")))(
    "an interface without ENA allowance counters, and one without statistics (exit 94), report nothing and log nothing",
    async () => {
      const ns = await namespace()
      await ns.sh("ip link add v0 type veth peer name v1")
      // What we cannot make here is an ENA device: the host root says v0 and lo are bound to `ena`, so
      // the check runs the real `ethtool -S` on them (veth statistics; lo has none, exit 94).
      const h = hostRoot()
      for (const i of ["v0", "lo"])
        h.link(`sys/class/net/${i}/device/driver`, "../../../../bus/pci/drivers/ena")
      await ns.build("ena-allowances", { filesRoot: h.root })
      expect(await ns.tick(0)).toEqual({ findings: [], logs: [] })
      expect(await ns.tick(5 * MIN)).toEqual({ findings: [], logs: [] })
      // the parser reads ethtool's real format: v0's peer_ifindex is v1's ifindex
      const stats = parseEthtoolStats(await ns.sh("ethtool -S v0"))
      expect(stats.get("peer_ifindex")).toBe(Number((await ns.sh("cat /sys/class/net/v1/ifindex")).trim()))
      expect(await ns.sh("ethtool -S lo >/dev/null 2>&1; echo $?")).toBe("94\n")
    }
  )
})

describe("XFS fragmentation: real xfs_db on a real XFS filesystem", () => {
  realIt(XFS)(
    "a freshly made filesystem is fine; after punching 2,000 one-block holes the average free extent is small",
    async () => {
      const dir = tempDir()
      const image = join(dir, "xfs.img")
      const mnt = join(dir, "mnt")
      const ns = await namespace()
      await ns.sh(
        `set -e; truncate -s 300M ${image}; mkfs.xfs -q ${image}; mkdir ${mnt}; mount -o loop ${image} ${mnt}`
      )
      const dev = (await ns.sh(`findmnt -n -o SOURCE ${mnt}`)).trim()
      expect(dev).toMatch(/^\/dev\/loop[0-9]+$/)
      // The check reads the mounts from /proc/1/mountinfo: the probe is PID 1 of the namespace.
      await ns.build("xfs-fragmentation")
      const fresh = await ns.tick(0)
      expect(fresh.findings.filter((f) => f.subject === dev)).toEqual([])
      expect(warnings(fresh.logs).filter((w) => w.includes(dev))).toEqual([])
      // Fill the free space, then free every other block of the first 2,000 pairs. xfs_freeze writes the
      // free-space btrees back in place, where xfs_db (reading the device, not the mount) sees them.
      const punches = Array.from({ length: 2000 }, (_, i) => `-c "fpunch ${i * 8192} 4096"`).join(" ")
      await ns.sh(`
        set -e
        free=$(( $(stat -f -c %a ${mnt}) * 4096 - 4194304 ))
        fallocate -l $free ${mnt}/fill
        xfs_io ${punches} ${mnt}/fill
        xfs_freeze -f ${mnt} && xfs_freeze -u ${mnt}
      `)
      const avg = parseAverageFreeExtent(await ns.sh(`xfs_db -r -c "freesp -s" ${dev}`))
      expect(avg).toBeLessThan(16)
      const fragmented = await ns.tick(10 * MIN)
      expect(fragmented.findings.filter((f) => f.subject === dev)).toEqual([
        expect.objectContaining({
          _tag: "Detection",
          reason: "XFSSmallAverageClusterSize",
          conditionType: "StorageReady",
          message: `The XFS Average Cluster size is small, which may prevent new files from being created due to free space fragmentation (${dev}: ${avg})`
        })
      ])
    }
  )
})

describe("EBS performance: real nvme-cli", () => {
  realIt(commands("nvme"))(
    "nvme-cli accepts the check's arguments; a device that answers no NVMe ioctl gives a clear warning, no finding",
    async () => {
      const ns = await namespace()
      // The host root claims an EBS controller named `null`, so the check runs the real
      // `nvme get-log /dev/null --log-id=0xd0 --log-len=4096 --raw-binary`: nvme-cli parses every option
      // (an unknown one would print its usage instead) and fails at the ioctl.
      const h = hostRoot()
      h.write("sys/class/nvme/null/model", "Amazon Elastic Block Store              \n")
      h.write("sys/class/nvme/null/serial", "vol0123456789abcdef0\n")
      await ns.build("ebs-performance", { filesRoot: h.root })
      const { findings, logs } = await ns.tick(0)
      expect(findings).toEqual([])
      expect(warnings(logs)).toHaveLength(1)
      expect(warnings(logs)[0]).toMatch(/nvme get-log failed.*"ctrl":"null".*exit [1-9][0-9]*: .*ioctl/)
      expect(warnings(logs)[0]).not.toMatch(/unrecognized option|Usage/)
    }
  )
})

describe("systemd-backed checks where systemd is not running (containers)", () => {
  realIt(all(commands("systemctl", "timedatectl"), SYSTEMD_ABSENT))(
    "clock-sync, npa and systemd-restarts watch nothing (absent, not Unknown) and say why",
    async () => {
      const ns = await namespace()
      for (const check of ["clock-sync", "npa", "systemd-restarts"]) {
        await ns.build(check)
        for (const at of [0, 5 * MIN]) {
          const { findings, logs } = await ns.tick(at)
          expect(findings).toEqual([])
          expect(warnings(logs)).toEqual([expect.stringMatching(/failed.*exit 1: .*systemd/)])
        }
      }
    }
  )
})

describe("mac-address-policy: real networkctl and systemd-analyze cat-config", () => {
  realIt(all(commands("networkctl"), SYSTEMD_ABSENT))(
    "without systemd-networkd, networkctl fails: nothing is reported and the warning says why",
    async () => {
      const ns = await namespace()
      const h = hostRoot()
      h.write("etc/os-release", 'NAME="Ubuntu"\nID=ubuntu\n')
      h.mkdir("var/log/pods/kube-system_aws-node-x7k2p_0b6a/aws-vpc-cni-init")
      await ns.build("mac-address-policy", { filesRoot: h.root })
      const { findings, logs } = await ns.tick(0)
      expect(findings).toEqual([])
      expect(warnings(logs)).toEqual([expect.stringMatching(/networkctl failed.*exit 1: /)])
    }
  )

  realIt(commands("systemd-analyze"))(
    "the policy is read from what systemd-analyze prints: vendor file, /etc override, drop-ins",
    async () => {
      const ns = await namespace()
      await ns.sh(`
        set -e
        mount -t tmpfs none /usr/lib/systemd/network && mount -t tmpfs none /etc/systemd/network
        printf '[Match]\\nOriginalName=*\\n\\n[Link]\\nNamePolicy=keep kernel database onboard slot path\\nMACAddressPolicy=persistent\\n' > /usr/lib/systemd/network/99-default.link
      `)
      const file = "/usr/lib/systemd/network/99-default.link"
      const finding = async () => macPolicyFinding(file, await ns.sh(`systemd-analyze cat-config ${file}`), 0)
      expect(await finding()).toMatchObject({
        reason: "MACAddressPolicyMisconfigured",
        message: `MACAddressPolicy in ${file} is set to "persistent" instead of 'none', which may cause network issues`
      })
      // a drop-in that sets none wins
      await ns.sh(`
        mkdir /etc/systemd/network/99-default.link.d
        printf '[Link]\\nMACAddressPolicy=none\\n' > /etc/systemd/network/99-default.link.d/50-cni.conf
      `)
      expect(await finding()).toBeUndefined()
      // a file of the same name in /etc replaces the vendor file (and the drop-in still applies after it)
      await ns.sh(`
        rm -r /etc/systemd/network/99-default.link.d
        printf '[Link]\\nMACAddressPolicy=random\\n' > /etc/systemd/network/99-default.link
      `)
      expect(await finding()).toMatchObject({ message: expect.stringContaining('set to "random"') })
    }
  )
})

describe("command failures, for real", () => {
  realIt(NAMESPACES)("a missing command (spawn ENOENT) is a warning naming it, no finding", async () => {
    const ns = await namespace()
    // Hide ctr if this machine has it: an empty tmpfs over its directory, in this mount namespace only.
    await ns.sh('c=$(command -v ctr) && mount -t tmpfs none "$(dirname "$c")" || true')
    await ns.build("containerd-deprecations")
    const { findings, logs } = await ns.tick(0)
    expect(findings).toEqual([])
    expect(warnings(logs)).toEqual([expect.stringMatching(/ctr deprecations list failed.*spawn ctr ENOENT/)])
  })

  realIt(commands("timedatectl", "sleep"))(
    "a command that hangs is killed at the check's timeout (5 s for timedatectl): a warning, no finding",
    async () => {
      const dir = tempDir()
      const slow = join(dir, "timedatectl")
      const pidFile = join(dir, "pid")
      writeFileSync(slow, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 60\n`)
      chmodSync(slow, 0o755)
      const ns = await namespace()
      await ns.sh(`mount --bind ${slow} "$(command -v timedatectl)"`)
      await ns.build("clock-sync")
      const { findings, logs } = await ns.tick(0)
      expect(findings).toEqual([])
      expect(warnings(logs)).toEqual([expect.stringMatching(/timedatectl failed.*timed out/)])
      // the hung process is gone (killed, not left behind)
      const pid = (await ns.sh(`cat ${pidFile}`)).trim()
      expect(await ns.sh(`kill -0 ${pid} 2>/dev/null && echo alive || echo gone`)).toBe("gone\n")
    }
  )
})
