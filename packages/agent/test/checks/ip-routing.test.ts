import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  assignedPodIPs,
  ipRoutingCheck,
  ipRoutingFindings,
  parseIPRules
} from "../../src/checks/ip-routing.ts"
import { makeHostRoot, reasons, runAt, type HostRoot } from "./host-root.ts"
import { recordedRunner } from "./recorded-runner.ts"
import { recordProduced } from "../reasons/produced-reasons.ts"

const MIN = 60_000

// GET /v1/enis on IPAMD's introspection port: datastore.ENIInfos as encoding/json writes it
// (aws/amazon-vpc-cni-k8s pkg/ipamd/datastore/data_store.go). 10.0.1.5 (primary ENI) and 10.0.2.7
// (secondary ENI, table 2) are assigned; 10.0.1.6 is a warm IP with an empty IPAM key.
const ENIS = JSON.stringify({
  TotalIPs: 3,
  AssignedIPs: 2,
  ENIs: {
    "eni-0a1b2c3d4e5f60001": {
      ID: "eni-0a1b2c3d4e5f60001",
      IsPrimary: true,
      IsTrunk: false,
      IsEFA: false,
      DeviceNumber: 0,
      AvailableIPv4Cidrs: {
        "10.0.1.5/32": {
          Cidr: { IP: "10.0.1.5", Mask: "/////w==" },
          IPAddresses: {
            "10.0.1.5": {
              Address: "10.0.1.5",
              IPAMKey: { networkName: "aws-cni", containerID: "4f1c0c7d9e", ifName: "eth0" },
              IPAMMetadata: { k8sPodNamespace: "default", k8sPodName: "web-0" },
              AssignedTime: "2026-11-30T06:00:00Z",
              UnassignedTime: "0001-01-01T00:00:00Z"
            }
          },
          IsPrefix: false,
          AddressFamily: "4"
        },
        "10.0.1.6/32": {
          Cidr: { IP: "10.0.1.6", Mask: "/////w==" },
          IPAddresses: {
            "10.0.1.6": {
              Address: "10.0.1.6",
              IPAMKey: { networkName: "", containerID: "", ifName: "" },
              IPAMMetadata: {},
              AssignedTime: "0001-01-01T00:00:00Z",
              UnassignedTime: "0001-01-01T00:00:00Z"
            }
          },
          IsPrefix: false,
          AddressFamily: "4"
        }
      },
      IPv6Cidrs: {}
    },
    "eni-0a1b2c3d4e5f60002": {
      ID: "eni-0a1b2c3d4e5f60002",
      IsPrimary: false,
      IsTrunk: false,
      IsEFA: false,
      DeviceNumber: 1,
      AvailableIPv4Cidrs: {
        "10.0.2.7/32": {
          Cidr: { IP: "10.0.2.7", Mask: "/////w==" },
          IPAddresses: {
            "10.0.2.7": {
              Address: "10.0.2.7",
              IPAMKey: { networkName: "aws-cni", containerID: "9a8b7c6d5e", ifName: "eth0" },
              IPAMMetadata: { k8sPodNamespace: "default", k8sPodName: "web-1" },
              AssignedTime: "2026-11-30T06:01:00Z",
              UnassignedTime: "0001-01-01T00:00:00Z"
            }
          },
          IsPrefix: false,
          AddressFamily: "4"
        }
      },
      IPv6Cidrs: null
    }
  }
})

// `ip rule` on a VPC CNI node with one secondary ENI (tab after the priority, as iproute2 prints).
const RULES = `0:\tfrom all lookup local
512:\tfrom all to 10.0.1.5 lookup main
512:\tfrom all to 10.0.2.7 lookup main
1024:\tfrom all fwmark 0x80/0x80 lookup main
1536:\tfrom 10.0.2.7 lookup 2
32766:\tfrom all lookup main
32767:\tfrom all lookup default
`

// `ip route show table all`.
const ROUTES = `default via 10.0.2.1 dev ens6 table 2
10.0.2.1 dev ens6 table 2 scope link
default via 10.0.0.1 dev ens5 proto dhcp src 10.0.0.10 metric 512
10.0.0.0/20 dev ens5 proto kernel scope link src 10.0.0.10 metric 512
10.0.1.5 dev eni3f2a1b0c9d8 scope link
10.0.2.7 dev eni7e6d5c4b3a2 scope link
local 10.0.0.10 dev ens5 table local proto kernel scope host src 10.0.0.10
broadcast 10.0.15.255 dev ens5 table local proto kernel scope link src 10.0.0.10
`

describe("ip routing (MissingIPRules, MissingIPRoutes, MissingDefaultRoutes)", () => {
  it("reads the assigned pod IPs from /v1/enis, skipping warm IPs", () => {
    expect(assignedPodIPs(ENIS)).toEqual([
      { ip: "10.0.1.5", primaryEni: true },
      { ip: "10.0.2.7", primaryEni: false }
    ])
    expect(assignedPodIPs("not json")).toBeUndefined()
  })

  it("parses 512 and 1536 rules", () => {
    const r = parseIPRules(RULES)
    expect([...r.toMain]).toEqual(["10.0.1.5", "10.0.2.7"])
    expect([...r.fromTable]).toEqual(["10.0.2.7"])
    expect(r.tables).toEqual(["2"])
  })

  it("reports nothing when every rule and route is in place", () => {
    expect(ipRoutingFindings(assignedPodIPs(ENIS)!, RULES, ROUTES, ROUTES, 0)).toEqual([])
  })

  it("reports a missing rule, a missing route (only where the rule exists) and a missing default route", () => {
    const rules = RULES.replace("512:\tfrom all to 10.0.1.5 lookup main\n", "")
    const routes = ROUTES.replace("10.0.2.7 dev eni7e6d5c4b3a2 scope link\n", "").replace(
      "default via 10.0.2.1 dev ens6 table 2\n",
      ""
    )
    const f = ipRoutingFindings(assignedPodIPs(ENIS)!, rules, routes, routes, 0)
    recordProduced(f)
    expect(reasons(f)).toEqual([
      "+MissingIPRules@10.0.1.5",
      "+MissingIPRoutes@10.0.2.7",
      "+MissingDefaultRoutes@2"
    ])
    expect(f.map((x) => (x._tag === "Detection" ? x.message : ""))).toEqual([
      "Pod IP 10.0.1.5 is missing rules: Expected entry like `from all to 10.0.1.5 lookup main`",
      "Pod IP 10.0.2.7 is missing secondary routes: Expected entry like `10.0.2.7 dev <dev> scope link`",
      "Missing default route rules for table 2: Expected entry like `default via <gateway-ip> dev <dev> table 2`"
    ])
    expect(f[0]).toMatchObject({ severity: "Event", conditionType: "NetworkingReady" })
  })

  it("checks IPv6 pod IPs against `ip -6 route` routes with metric 1024 pref medium", () => {
    const pods = [{ ip: "2600:1f14:abc:1::5", primaryEni: true }]
    const rules = "512:\tfrom all to 2600:1f14:abc:1::5 lookup main\n"
    const v6 = "2600:1f14:abc:1::5 dev eni3f2a1b0c9d8 metric 1024 pref medium\n"
    expect(ipRoutingFindings(pods, rules, v6, "", 0)).toEqual([])
    expect(reasons(ipRoutingFindings(pods, rules, "", "", 0))).toEqual([
      "+MissingIPRoutes@2600:1f14:abc:1::5"
    ])
  })

  it("a route whose link is down is still there (iproute2 prints `linkdown` between metric and pref)", () => {
    // Captured from iproute2 6.1.0 on Debian 12: `ip -6 route add 2001:db8::5 dev v0` and
    // `ip route add 10.0.1.5 dev v0 scope link` with v0's veth peer down.
    const v6 = "2001:db8::5 dev v0 metric 1024 linkdown pref medium\n"
    const v4 = "10.0.1.5 dev v0 scope link linkdown \n"
    const rule = (ip: string) => `512:\tfrom all to ${ip} lookup main\n`
    expect(
      ipRoutingFindings([{ ip: "2001:db8::5", primaryEni: true }], rule("2001:db8::5"), v6, v4, 0)
    ).toEqual([])
    expect(ipRoutingFindings([{ ip: "10.0.1.5", primaryEni: true }], rule("10.0.1.5"), v4, v4, 0)).toEqual([])
  })

  describe("end to end", () => {
    let host: HostRoot
    let server: Server
    let url: string
    beforeEach(async () => {
      host = makeHostRoot()
      server = createServer((req, res) => {
        if (req.url === "/v1/enis") {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(ENIS)
        } else {
          res.writeHead(404)
          res.end()
        }
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/enis`
    })
    afterEach(async () => {
      host.cleanup()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    })

    const runner = () =>
      recordedRunner((_cmd, args) =>
        args[0] === "rule"
          ? { stdout: RULES.replace("1536:\tfrom 10.0.2.7 lookup 2\n", "1536:\tfrom 10.0.2.7 lookup 3\n") }
          : { stdout: ROUTES }
      )

    it("fetches /v1/enis over HTTP and compares it with `ip rule` and `ip route`", async () => {
      host.mkdir("var/log/pods/kube-system_aws-node-abcde_1234/aws-vpc-cni-init")
      const r = runner()
      const f = await runAt(ipRoutingCheck(host.files, r, 5 * MIN, url), host.files, 0)
      expect(reasons(f)).toEqual(["+MissingDefaultRoutes@3"])
      expect(r.calls).toEqual(["ip rule", "ip route show table all"])
    })

    it("IPv6 pods are checked against `ip -6 rule` (`ip rule` lists IPv4 rules only)", async () => {
      // Captured from iproute2 6.1.0 on Debian 12 after `ip -6 rule add from all to 2001:db8::5 lookup main
      // priority 512` and `ip -6 route add 2001:db8::5 dev v0`; plain `ip rule` shows none of it.
      const v6Enis = JSON.stringify({
        ENIs: {
          "eni-1": {
            IsPrimary: true,
            IPv6Cidrs: {
              "2001:db8::/80": {
                IPAddresses: {
                  "2001:db8::5": {
                    Address: "2001:db8::5",
                    IPAMKey: { networkName: "aws-cni", containerID: "c1", ifName: "eth0" }
                  }
                }
              }
            }
          }
        }
      })
      server.removeAllListeners("request")
      server.on("request", (_req, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(v6Enis)
      })
      host.mkdir("var/log/pods/kube-system_aws-node-abcde_1234/aws-vpc-cni-init")
      const r = recordedRunner((_cmd, args) =>
        args.join(" ") === "-6 rule"
          ? {
              stdout:
                "0:\tfrom all lookup local\n512:\tfrom all to 2001:db8::5 lookup main\n32766:\tfrom all lookup main\n"
            }
          : args.join(" ") === "rule"
            ? {
                stdout:
                  "0:\tfrom all lookup local\n32766:\tfrom all lookup main\n32767:\tfrom all lookup default\n"
              }
            : args[0] === "-6"
              ? {
                  stdout:
                    "2001:db8::5 dev v0 metric 1024 pref medium\nlocal ::1 dev lo table local proto kernel metric 0 pref medium\n"
                }
              : { stdout: "" }
      )
      expect(await runAt(ipRoutingCheck(host.files, r, 5 * MIN, url), host.files, 0)).toEqual([])
      expect(r.calls).toEqual(["ip -6 rule", "ip route show table all", "ip -6 route show table all"])
    })

    it("does nothing without the VPC CNI", async () => {
      const r = runner()
      expect(await runAt(ipRoutingCheck(host.files, r, 5 * MIN, url), host.files, 0)).toEqual([])
      expect(r.calls).toEqual([])
    })
  })
})
