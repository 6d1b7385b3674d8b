// tools/kind's pure parts: the kind config it writes, the pod network it configures, podman's limits, the host
// sysctls it restores, the Debian mirror it debootstraps from, and when npm test's kind phase runs.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { cniConfig, routesFor } from "../../../tools/kind/cni.mjs"
import { changedSysctls } from "../../../tools/kind/host.mjs"
import { kindConfig } from "../../../tools/kind/kind.mjs"
import { debianMirror } from "../../../tools/kind/node-image.mjs"
import { kindPhasePlan } from "../../../tools/kind/phase.mjs"
import { containersConf, hardLimit } from "../../../tools/kind/podman.mjs"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"

const base = parse(readFileSync(join(REPO_ROOT, "deploy/kind/kind-config.yaml"), "utf8"))
const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             96363                96363                processes
Max open files            20000                20000                files
Max locked memory         unlimited            unlimited            bytes
`

describe("the kind config kind:up writes", () => {
  it("adds the cgroup v1 kubelet patch and our CNI only where needed, keeping deploy/kind's nodes", () => {
    const plain = kindConfig(base, { cgroupV1: false, ownCni: false })
    expect(plain).toEqual(base)
    const here = kindConfig(base, { cgroupV1: true, ownCni: true })
    expect(here.nodes).toEqual(base.nodes)
    expect(here.networking).toEqual({ disableDefaultCNI: true })
    expect(here.kubeadmConfigPatches.map((p: string) => parse(p))).toEqual([
      { kind: "KubeletConfiguration", failCgroupV1: false }
    ])
    expect(base.networking).toBeUndefined()
  })
})

describe("the pod network in place of kindnetd", () => {
  const nodes = [
    { name: "cp", podCIDR: "10.244.0.0/24", ip: "10.89.0.2" },
    { name: "w1", podCIDR: "10.244.1.0/24", ip: "10.89.0.3" },
    { name: "w2", podCIDR: "10.244.2.0/24", ip: "10.89.0.4" }
  ]
  it("routes each node to every other node's pods, through that node", () => {
    expect(routesFor("w1", nodes)).toEqual([
      ["route", "replace", "10.244.0.0/24", "via", "10.89.0.2"],
      ["route", "replace", "10.244.2.0/24", "via", "10.89.0.4"]
    ])
  })
  it("hands out the node's own podCIDR", () => {
    const cfg = cniConfig("10.244.1.0/24")
    expect(cfg.plugins[0]?.type).toBe("ptp")
    expect(cfg.plugins[0]?.ipam?.ranges).toEqual([[{ subnet: "10.244.1.0/24" }]])
  })
})

describe("podman's configuration", () => {
  it("sets the ulimits to this machine's hard limits, nproc at most 32768", () => {
    expect(hardLimit("Max open files", LIMITS)).toBe(20000)
    expect(hardLimit("Max locked memory", LIMITS)).toBeUndefined()
    const conf = containersConf("/c", LIMITS)
    expect(conf).toContain('default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]')
    expect(conf).toContain('runtime = "runc"')
    expect(conf).toContain('cgroup_manager = "cgroupfs"')
    expect(conf).toContain('network_backend = "netavark"')
    expect(conf).toContain('network_config_dir = "/c/networks"')
  })
})

describe("the host sysctls kind:down restores", () => {
  it("lists exactly the ones that changed, with their old values", () => {
    const before = { "kernel/panic": "0", "vm/overcommit_memory": "0", "net/ipv4/ip_forward": "0" }
    const now = { "kernel/panic": "10", "vm/overcommit_memory": "0", "net/ipv4/ip_forward": "1" }
    expect(changedSysctls(before, now)).toEqual([
      { key: "kernel.panic", path: "kernel/panic", was: "0", now: "10" },
      { key: "net.ipv4.ip_forward", path: "net/ipv4/ip_forward", was: "0", now: "1" }
    ])
  })
})

describe("the Debian mirror of the node image", () => {
  it("is apt's, from deb822 or one-line sources, else deb.debian.org", () => {
    expect(debianMirror("Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n")).toBe(
      "http://mirror.example/debian"
    )
    expect(debianMirror("deb [arch=amd64] http://m2.example/debian bookworm main\n")).toBe(
      "http://m2.example/debian"
    )
    expect(debianMirror("")).toBe("http://deb.debian.org/debian")
  })
})

describe("npm test's kind phase", () => {
  const can = {
    disabled: false,
    platform: "linux",
    root: true,
    docker: false,
    podman: true,
    imageCached: true
  }
  it("runs only as root on Linux with an engine and the node image already there", () => {
    expect(kindPhasePlan(can)).toEqual({ run: true })
    expect(kindPhasePlan({ ...can, imageCached: false })).toMatchObject({
      run: false,
      reason: expect.stringContaining("the kind node image is not built")
    })
    expect(kindPhasePlan({ ...can, docker: true, imageCached: false }).reason).toContain(
      "kindest/node:v1.37.2"
    )
    expect(kindPhasePlan({ ...can, podman: false }).reason).toContain("no Docker daemon and no podman")
    expect(kindPhasePlan({ ...can, root: false }).reason).toBe("it needs root on Linux")
    expect(kindPhasePlan({ ...can, disabled: true }).reason).toBe("NODEMEND_KIND=0")
  })
})
