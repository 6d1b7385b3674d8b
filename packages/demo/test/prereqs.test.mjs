// tools/prereqs.mjs's pure part: given what a machine has, who runs it and whether apt-get is there, what is
// missing, the one apt-get command, the errors with their fix, and the optional phases skipped with the reason.
import { describe, expect, it } from "vitest"
import { ITEMS, PHASES, plan } from "../../../tools/prereqs.mjs"

const TEST_PHASES = ["unit", "hostCommands", "moto", "cluster", "realnode"]
const all = () => true
const allBut =
  (...ids) =>
  (id) =>
    !ids.includes(id)

describe("plan", () => {
  it("has nothing to do on a machine that has everything", () => {
    for (const root of [true, false]) {
      const p = plan({ phases: TEST_PHASES, present: all, root, apt: true })
      expect(p.apt).toEqual([])
      expect(p.aptCommand).toBeNull()
      expect(p.venv).toBe(false)
      expect(p.errors).toEqual([])
      // Not root: the phases that need root are skipped, and say so.
      expect(p.skips).toEqual(root ? {} : { realnode: "it needs root on Linux" })
    }
  })

  it("as root with apt-get: one apt-get install of every missing package, each once, sorted", () => {
    const p = plan({
      phases: TEST_PHASES,
      present: allBut("cc", "systemd-journal-remote", "buildah", "ctr", "containerd", "cni-bridge", "nvme"),
      root: true,
      apt: true
    })
    expect(p.apt).toEqual([
      "buildah",
      "containerd",
      "containernetworking-plugins",
      "gcc",
      "nvme-cli",
      "systemd-journal-remote"
    ])
    expect(p.aptCommand).toBe(
      "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah containerd containernetworking-plugins gcc nvme-cli systemd-journal-remote"
    )
    expect(p.errors).toEqual([])
    expect(p.skips).toEqual({})
  })

  it("moto: python3-venv from apt, then moto into its virtual environment", () => {
    const p = plan({
      phases: ["moto"],
      present: allBut("moto_server", "python3-venv"),
      root: true,
      apt: true
    })
    expect(p.apt).toEqual(["python3-venv"])
    expect(p.venv).toBe(true)
    // With python3-venv there, no root needed: the virtual environment is the user's.
    const user = plan({ phases: ["moto"], present: allBut("moto_server"), root: false, apt: true })
    expect(user).toMatchObject({ apt: [], venv: true, errors: [], skips: {} })
    // Without it and not root: skipped, with the command.
    const skipped = plan({
      phases: ["moto"],
      present: allBut("moto_server", "python3-venv"),
      root: false,
      apt: true
    })
    expect(skipped.venv).toBe(false)
    expect(skipped.skips.moto).toBe(
      "missing moto_server, python3-venv (run: sudo apt-get update && sudo apt-get install -y python3-venv); MotoConformance.test.ts skips"
    )
  })

  it("NODEMEND_PREREQS=check: moto is not put in a virtual environment either; the skip says how", () => {
    const p = plan({
      phases: ["moto"],
      present: allBut("moto_server"),
      root: true,
      apt: true,
      install: false
    })
    expect(p.venv).toBe(false)
    expect(p.skips.moto).toBe(
      "missing moto_server (moto_server: pip install 'moto[server]==5.2.1' (in a virtual environment)); MotoConformance.test.ts skips"
    )
  })

  it("not root: a required phase stops with the exact command, installs nothing", () => {
    const p = plan({ phases: ["demo"], present: allBut("cc", "openssl"), root: false, apt: true })
    expect(p.apt).toEqual([])
    expect(p.aptCommand).toBeNull()
    expect(p.errors).toEqual([
      "openssl (openssl): makes the local cluster's PKI",
      "cc (gcc): builds the DCGM/NVML test doubles"
    ])
    expect(p.fix).toEqual(["sudo apt-get update && sudo apt-get install -y gcc openssl"])
  })

  it("an item two required phases need is named once", () => {
    const p = plan({ phases: ["unit", "cluster"], present: allBut("cc"), root: false, apt: true })
    expect(p.errors).toEqual(["cc (gcc): builds the DCGM/NVML test doubles"])
    expect(p.fix).toEqual(["sudo apt-get update && sudo apt-get install -y gcc"])
  })

  it("NODEMEND_PREREQS=check (install: false) as root: the command without sudo, nothing installed", () => {
    const p = plan({ phases: ["unit"], present: allBut("git"), root: true, apt: true, install: false })
    expect(p.aptCommand).toBeNull()
    expect(p.fix).toEqual(["apt-get update && apt-get install -y git"])
  })

  it("not root: an optional phase is skipped with the reason and the command, the rest runs", () => {
    const p = plan({ phases: TEST_PHASES, present: allBut("ethtool", "xfs_db"), root: false, apt: true })
    expect(p.errors).toEqual([])
    expect(p.skips.hostCommands).toBe(
      "missing ethtool, xfs_db (run: sudo apt-get update && sudo apt-get install -y ethtool xfsprogs); their tests skip"
    )
    expect(p.skips.realnode).toBe("it needs root on Linux")
  })

  it("without apt-get: Debian package names, and what has no package says how to get it", () => {
    const p = plan({
      phases: ["unit", "images"],
      present: allBut("go", "cc", "apt-get"),
      root: true,
      apt: false
    })
    expect(p.aptCommand).toBeNull()
    expect(p.errors).toEqual([
      `go: ${ITEMS.go.why}`,
      "cc (gcc): builds the DCGM/NVML test doubles",
      `apt-get: ${ITEMS["apt-get"].why}`
    ])
    expect(p.fix).toEqual([
      "install (Debian package names): gcc",
      `go: ${ITEMS.go.howto}`,
      `apt-get: ${ITEMS["apt-get"].howto}`
    ])
  })

  it("Go is never installed: a missing Go stops the phase even as root with apt-get", () => {
    const p = plan({ phases: ["demo"], present: allBut("go", "cc"), root: true, apt: true })
    expect(p.apt).toEqual([])
    expect(p.errors).toHaveLength(2)
    expect(p.fix).toEqual(["apt-get update && apt-get install -y gcc", `go: ${ITEMS.go.howto}`])
  })

  it("an optional phase with something apt cannot give is skipped and its packages are not installed", () => {
    const p = plan({ phases: ["realnode"], present: allBut("apt-get", "runc"), root: true, apt: false })
    expect(p.apt).toEqual([])
    expect(p.skips.realnode).toBe(
      `missing apt-get, runc (install (Debian package names): runc; apt-get: ${ITEMS["apt-get"].howto})`
    )
  })

  it("a required phase that needs root, not root: an error", () => {
    const p = plan({ phases: ["realnodeCluster"], present: all, root: false, apt: true })
    expect(p.errors).toEqual([`${PHASES.realnodeCluster.title}: it needs root on Linux`])
  })

  it("the unit phase needs promtool (the rules' and dashboard's tests): Debian's prometheus package", () => {
    expect(PHASES.unit.items).toContain("promtool")
    const p = plan({ phases: ["unit"], present: allBut("promtool"), root: true, apt: true })
    expect(p.aptCommand).toBe(
      "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus"
    )
    const user = plan({ phases: ["unit"], present: allBut("promtool"), root: false, apt: true })
    expect(user.fix).toEqual(["sudo apt-get update && sudo apt-get install -y prometheus"])
  })

  it("kind:up without Docker, as root on Debian: podman, its netavark backend and debootstrap in one install", () => {
    const p = plan({
      phases: ["kindPodman"],
      present: allBut("podman", "netavark", "aardvark-dns", "debootstrap"),
      root: true,
      apt: true
    })
    expect(p.apt).toEqual(["aardvark-dns", "debootstrap", "netavark", "podman"])
    expect(p.errors).toEqual([])
    const user = plan({ phases: ["kindPodman"], present: allBut("podman"), root: false, apt: true })
    expect(user.errors).toEqual([`${PHASES.kindPodman.title}: it needs root on Linux`])
  })

  it("every phase names known items, and every item has a way to get it", () => {
    for (const phase of Object.values(PHASES)) for (const id of phase.items) expect(ITEMS[id]).toBeDefined()
    for (const item of Object.values(ITEMS)) expect(Boolean(item.apt || item.howto || item.venv)).toBe(true)
    expect(() => plan({ phases: ["nope"], present: all })).toThrow(/unknown prerequisite phase nope/)
  })
})
