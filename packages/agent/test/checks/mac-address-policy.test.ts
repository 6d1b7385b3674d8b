import fc from "fast-check"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  isUbuntu,
  lastAssignment,
  linkFilesOf,
  macAddressPolicyCheck
} from "../../src/checks/mac-address-policy.ts"
import type { Detection } from "../../src/model.ts"
import { makeHostRoot, reasons, runAt, type HostRoot } from "./host-root.ts"
import { recordedRunner } from "./recorded-runner.ts"

// `networkctl --json=short` on an Ubuntu 22.04 EKS node with the VPC CNI: systemd's manager_build_json
// (src/network/networkd-json.c) -> {"Interfaces":[...]} with `LinkFile` only where udev applied one.
const NETWORKCTL = JSON.stringify({
  Interfaces: [
    {
      Index: 1,
      Name: "lo",
      Type: "loopback",
      Flags: 65609,
      OperationalState: "carrier",
      SetupState: "unmanaged"
    },
    {
      Index: 2,
      Name: "ens5",
      Type: "ether",
      Driver: "ena",
      LinkFile: "/run/systemd/network/10-netplan-ens5.link",
      NetworkFile: "/run/systemd/network/10-netplan-ens5.network",
      OperationalState: "routable"
    },
    {
      Index: 3,
      Name: "eni3f2a1b0c9d8",
      Type: "ether",
      Kind: "veth",
      LinkFile: "/usr/lib/systemd/network/99-default.link",
      OperationalState: "enslaved"
    },
    { Index: 4, Name: "eni7e6d5c4b3a2", Kind: "veth", LinkFile: "/usr/lib/systemd/network/99-default.link" }
  ],
  Routes: []
})

// `systemd-analyze cat-config /usr/lib/systemd/network/99-default.link` on Ubuntu (systemd 249): the file
// as shipped by systemd (network/99-default.link) with the path as a comment header.
const DEFAULT_LINK = `# /usr/lib/systemd/network/99-default.link
#  SPDX-License-Identifier: MIT-0
#
#  This config file is installed as part of systemd.
#  It may be freely copied and edited (following the MIT No Attribution license).

[Match]
OriginalName=*

[Link]
NamePolicy=keep kernel database onboard slot path
AlternativeNamesPolicy=database onboard slot path
MACAddressPolicy=persistent
`
// The same with the drop-in operators add (or Ubuntu's own fix for the CNI).
const DEFAULT_LINK_FIXED = `${DEFAULT_LINK}
# /etc/systemd/network/99-default.link.d/10-mac-none.conf
[Link]
MACAddressPolicy=none
`
const NETPLAN_LINK = `# /run/systemd/network/10-netplan-ens5.link
[Match]
PermanentMACAddress=02:1a:2b:3c:4d:5e

[Link]
Name=ens5
WakeOnLan=off
`

describe("MACAddressPolicyMisconfigured", () => {
  it("reads distinct LinkFiles from networkctl's JSON", () => {
    expect(linkFilesOf(NETWORKCTL)).toEqual([
      "/run/systemd/network/10-netplan-ens5.link",
      "/usr/lib/systemd/network/99-default.link"
    ])
    expect(linkFilesOf(JSON.stringify({ Interfaces: [{ LinkFile: 3 }] }))).toBeUndefined()
    expect(linkFilesOf("Failed to connect to bus")).toBeUndefined()
  })

  it("takes the last MACAddressPolicy= of the [Link] section", () => {
    expect(lastAssignment(DEFAULT_LINK, "Link", "MACAddressPolicy")).toBe("persistent")
    expect(lastAssignment(DEFAULT_LINK_FIXED, "Link", "MACAddressPolicy")).toBe("none")
    expect(lastAssignment(NETPLAN_LINK, "Link", "MACAddressPolicy")).toBeUndefined()
    expect(lastAssignment("[Match]\nMACAddressPolicy=random\n", "Link", "MACAddressPolicy")).toBeUndefined()
    expect(
      lastAssignment(
        "[Link]\n  MACAddressPolicy =  random  \n;MACAddressPolicy=none\n",
        "Link",
        "MACAddressPolicy"
      )
    ).toBe("random")
  })

  it("ini parser: the last assignment wins whatever the sections, comments and spacing around it", () => {
    const ident = fc.stringMatching(/^[A-Za-z][A-Za-z0-9]{0,8}$/)
    const value = fc.stringMatching(/^[A-Za-z0-9 ._-]{0,12}$/).map((v) => v.trim())
    const entry = fc.oneof(
      fc.record({ kind: fc.constant("section" as const), name: fc.constantFrom("Link", "Match", "Other") }),
      fc.record({
        kind: fc.constant("comment" as const),
        text: fc.stringMatching(/^[^\n\r]{0,20}$/),
        mark: fc.constantFrom("#", ";")
      }),
      fc.record({
        kind: fc.constant("assign" as const),
        key: fc.oneof(fc.constant("MACAddressPolicy"), ident),
        value,
        pad: fc.constantFrom("", " ", "\t")
      })
    )
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 30 }), (entries) => {
        let section = ""
        let expected: string | undefined
        const lines: string[] = []
        for (const e of entries) {
          if (e.kind === "section") {
            section = e.name
            lines.push(`[${e.name}]`)
          } else if (e.kind === "comment") lines.push(`${e.mark}${e.text}`)
          else {
            lines.push(`${e.pad}${e.key}${e.pad}=${e.pad}${e.value}${e.pad}`)
            if (section === "Link" && e.key === "MACAddressPolicy") expected = e.value
          }
        }
        expect(lastAssignment(lines.join("\n"), "Link", "MACAddressPolicy")).toBe(expected)
      })
    )
  })

  it("recognises Ubuntu from os-release", () => {
    expect(isUbuntu('NAME="Ubuntu"\nVERSION_ID="22.04"\nID=ubuntu\nID_LIKE=debian\n')).toBe(true)
    expect(isUbuntu('NAME="Amazon Linux"\nID="amzn"\nID_LIKE="fedora"\n')).toBe(false)
    expect(isUbuntu("ID=debian\nID_LIKE=ubuntu\n")).toBe(false)
    expect(isUbuntu(undefined)).toBe(false)
  })

  describe("check", () => {
    let host: HostRoot
    beforeEach(() => {
      host = makeHostRoot()
      host.write("etc/os-release", 'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\n')
      host.mkdir("var/log/pods/kube-system_aws-node-x1_0f0f/aws-vpc-cni-init")
    })
    afterEach(() => host.cleanup())

    const runner = (defaultLink: string) =>
      recordedRunner((cmd, args) => {
        if (cmd === "networkctl") return { stdout: NETWORKCTL }
        if (cmd === "systemd-analyze" && args[1] === "/usr/lib/systemd/network/99-default.link")
          return { stdout: defaultLink }
        if (cmd === "systemd-analyze") return { stdout: NETPLAN_LINK }
        return "missing"
      })

    it("reports each link file whose effective policy is not none, once", async () => {
      const r = runner(DEFAULT_LINK)
      const fs = await runAt(macAddressPolicyCheck(host.files, r, 300_000), host.files, 0)
      expect(reasons(fs)).toEqual(["+MACAddressPolicyMisconfigured@/usr/lib/systemd/network/99-default.link"])
      expect((fs[0] as Detection).message).toBe(
        "MACAddressPolicy in /usr/lib/systemd/network/99-default.link is set to \"persistent\" instead of 'none', which may cause network issues"
      )
      expect(r.calls).toEqual([
        "networkctl --json=short",
        "systemd-analyze cat-config /run/systemd/network/10-netplan-ens5.link",
        "systemd-analyze cat-config /usr/lib/systemd/network/99-default.link"
      ])
    })

    it("a drop-in setting none fixes it", async () => {
      expect(
        await runAt(macAddressPolicyCheck(host.files, runner(DEFAULT_LINK_FIXED), 300_000), host.files, 0)
      ).toEqual([])
    })

    it("not Ubuntu, or no VPC CNI: nothing runs", async () => {
      const r = runner(DEFAULT_LINK)
      host.write("etc/os-release", 'ID="amzn"\n')
      expect(await runAt(macAddressPolicyCheck(host.files, r, 300_000), host.files, 0)).toEqual([])
      host.write("etc/os-release", "ID=ubuntu\n")
      host.remove("var/log/pods")
      expect(await runAt(macAddressPolicyCheck(host.files, r, 300_000), host.files, 0)).toEqual([])
      expect(r.calls).toEqual([])
    })
  })
})
