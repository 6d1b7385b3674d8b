// The system prerequisites of every entry point, in one place: `npm test` (per phase), `npm start` and
// `npm run demo:scenario` (the demo), `npm run images`, the real node of `cluster:up --real-node`, and `kind:up`.
//
// Each entry point calls ensurePrereqs(phases) first. For every phase it checks the commands and files the phase
// runs; what is missing and has a Debian package is installed, as root where apt-get exists, by ONE
// `apt-get update -qq && apt-get install -y ...` for all phases together (printed before it runs). Otherwise a
// required phase stops the entry point with the exact command to run, and an optional phase is skipped with the
// reason (npm test prints it in its summary). moto's server (the AWS provider's conformance tests) comes from PyPI
// into a virtual environment under the cache, pinned, where `moto_server` is not on PATH already.
//
// Go and Node are the user's (README: Node 20+ and Go): never installed here, only checked and named.
//
//   NODEMEND_PREREQS=check         never install: print the command and stop (or skip) instead
//   NODEMEND_PREREQS_ABSENT=a,b    treat these items (ids of ITEMS) as absent in the first check, to exercise
//                                  the install and skip paths on a machine that has them
//
// plan() is the pure part (what is missing, the apt command, the errors and the skips); ensurePrereqs() probes
// the machine, runs the plan and checks again after installing.
import { spawnSync } from "node:child_process"
import { accessSync, constants, mkdirSync, rmSync, symlinkSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { delimiter, join } from "node:path"

/** moto, as the conformance tests were checked against (packages/repair-controller/test/aws/MotoConformance.test.ts). */
export const MOTO_VERSION = "5.2.1"
/** The oldest Go that fetches the toolchain the go.mod files ask for (GOTOOLCHAIN=auto). */
export const GO_MIN = [1, 21]

const GO_HOWTO =
  "install Go >= 1.21 from https://go.dev/doc/install (it fetches the 1.26 toolchain the builds need; " +
  "Debian 13 and Ubuntu 24.04: apt-get install golang-go; Debian 12's golang-go is 1.19, too old)"

/**
 * What a phase may need: how to tell it is there (`command` on PATH, one of `files`, a `python` import, or a
 * `special` probe) and the Debian package that provides it (`apt`), or how to get it otherwise (`howto`).
 */
export const ITEMS = {
  go: { command: "go", special: "go", howto: GO_HOWTO, why: "builds the control plane, helm, Karpenter" },
  cc: { command: "cc", apt: "gcc", why: "builds the DCGM/NVML test doubles" },
  openssl: { command: "openssl", apt: "openssl", why: "makes the local cluster's PKI" },
  git: { command: "git", apt: "git", why: "the reason-code contract check, the fresh-clone test" },
  promtool: {
    command: "promtool",
    apt: "prometheus",
    why: "checks and unit-tests the alert and recording rules and the dashboard's queries"
  },
  prometheus: {
    command: "prometheus",
    apt: "prometheus",
    why: "the cluster tests' Prometheus: scrapes the binaries, evaluates the alert rules"
  },
  "systemd-journal-remote": {
    files: ["/lib/systemd/systemd-journal-remote", "/usr/lib/systemd/systemd-journal-remote"],
    apt: "systemd-journal-remote",
    why: "writes real journal files (the journal source's fixtures, the demo's journal faults)"
  },
  journalctl: { command: "journalctl", apt: "systemd", why: "the agent reads the journal through it" },
  "iptables-save": { command: "iptables-save", apt: "iptables", why: "a host command the agent checks run" },
  ethtool: { command: "ethtool", apt: "ethtool", why: "a host command the agent checks run" },
  xfs_db: { command: "xfs_db", apt: "xfsprogs", why: "a host command the agent checks run" },
  nvme: { command: "nvme", apt: "nvme-cli", why: "a host command the agent checks run" },
  ip: { command: "ip", apt: "iproute2", why: "host networking (agent checks, the real node's bridge)" },
  iptables: { command: "iptables", apt: "iptables", why: "the real node's kube-proxy and CNI" },
  buildah: { command: "buildah", apt: "buildah", why: "builds the OCI images (vfs storage, no daemon)" },
  "apt-get": {
    command: "apt-get",
    howto: "a Debian-based system: the images' base is Debian's libc6/libstdc++6 (apt-get download)",
    why: "fetches the images' base packages"
  },
  "dpkg-deb": { command: "dpkg-deb", apt: "dpkg", why: "unpacks the images' base packages" },
  containerd: { command: "containerd", apt: "containerd", why: "the real node's container runtime" },
  ctr: { command: "ctr", apt: "containerd", why: "imports the images into the real node" },
  runc: { command: "runc", apt: "runc", why: "the real node's OCI runtime" },
  "cni-bridge": {
    files: ["/usr/lib/cni/bridge"],
    apt: "containernetworking-plugins",
    why: "the real node's pod network"
  },
  "cni-host-local": {
    files: ["/usr/lib/cni/host-local"],
    apt: "containernetworking-plugins",
    why: "the real node's pod addresses"
  },
  "cni-loopback": {
    files: ["/usr/lib/cni/loopback"],
    apt: "containernetworking-plugins",
    why: "the real node's pod loopback"
  },
  podman: {
    command: "podman",
    apt: "podman",
    why: "runs the kind cluster's node containers (no Docker daemon)"
  },
  netavark: {
    files: ["/usr/lib/podman/netavark"],
    apt: "netavark",
    why: "podman's network backend for kind (its CNI backend would write /etc/cni/net.d)"
  },
  "aardvark-dns": {
    files: ["/usr/lib/podman/aardvark-dns"],
    apt: "aardvark-dns",
    why: "name resolution on podman's kind network"
  },
  debootstrap: { command: "debootstrap", apt: "debootstrap", why: "the kind node image's Debian root" },
  "python3-venv": {
    python: "import ensurepip, venv",
    apt: "python3-venv",
    why: "makes the virtual environment moto is installed into"
  },
  moto_server: {
    command: "moto_server",
    special: "moto",
    venv: `moto[server]==${MOTO_VERSION}`,
    needs: "python3-venv",
    why: "an EC2 imitation nobody here wrote, for the AWS provider's conformance tests"
  }
}

/**
 * The phases: `items` each needs; `optional` ones are skipped (with the reason) when something is missing that
 * cannot be installed here, and say what the skip costs; `root` ones also need root on Linux.
 */
export const PHASES = {
  unit: {
    title: "lint, typecheck, unit tests",
    items: ["go", "cc", "git", "systemd-journal-remote", "journalctl", "promtool"]
  },
  hostCommands: {
    title: "the agent's checks against the real host commands",
    optional: true,
    skips: "their tests skip",
    items: ["iptables-save", "ethtool", "xfs_db", "nvme", "ip"]
  },
  moto: {
    title: "the AWS provider's conformance tests against moto",
    optional: true,
    skips: "MotoConformance.test.ts skips",
    items: ["moto_server"]
  },
  runtimeTest: {
    title: "the agent's CRI client against a real containerd (real-containerd.test.ts)",
    optional: true,
    root: true,
    skips: "real-containerd.test.ts skips",
    items: ["containerd", "ctr", "runc"]
  },
  cluster: {
    title: "the cluster tests",
    items: ["go", "openssl", "cc", "git", "systemd-journal-remote", "journalctl", "prometheus"]
  },
  realnode: {
    title: "the real-node phase (images built twice, same digests; a kubelet node; the chart as shipped)",
    optional: true,
    root: true,
    items: [
      "buildah",
      "apt-get",
      "dpkg-deb",
      "containerd",
      "ctr",
      "runc",
      "iptables",
      "ip",
      "cni-bridge",
      "cni-host-local",
      "cni-loopback"
    ]
  },
  kind: {
    title: "the kind phase (the chart and a repair on a kind cluster)",
    optional: true,
    root: true,
    skips: "the kind phase skips",
    items: ["podman", "netavark", "aardvark-dns", "runc", "buildah", "iptables"]
  },
  /** kind:up without a Docker daemon: podman and what the node image is assembled with (tools/kind). */
  kindPodman: {
    title: "a kind cluster with podman (kind:up)",
    root: true,
    items: ["go", "podman", "netavark", "aardvark-dns", "runc", "debootstrap", "buildah", "iptables"]
  },
  /** kind:up with Docker: the published node image; buildah makes the kwok image. */
  kindDocker: {
    title: "a kind cluster with Docker (kind:up)",
    root: true,
    items: ["go", "buildah"]
  },
  demo: {
    title: "the demo (npm start, demo:scenario)",
    items: ["go", "openssl", "cc", "systemd-journal-remote", "journalctl"]
  },
  images: {
    title: "npm run images",
    items: ["buildah", "apt-get", "dpkg-deb"]
  },
  /** cluster:up --real-node (check only: realnode.mjs's preflight). */
  realnodeCluster: {
    title: "a real node (cluster:up --real-node)",
    root: true,
    items: [
      "containerd",
      "ctr",
      "runc",
      "iptables",
      "ip",
      "buildah",
      "cni-bridge",
      "cni-host-local",
      "cni-loopback"
    ]
  }
}

const uniq = (xs) => [...new Set(xs)]
const describe = (id) => {
  const i = ITEMS[id]
  const what = i.command ?? id
  return i.apt ? `${what} (${i.apt}): ${i.why}` : `${what}: ${i.why}`
}

/** The one install command, as root: apt-get update and install of `packages`. */
export const aptCommand = (packages) =>
  `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${packages.join(" ")}`

/** The command a user runs: `sudo` in front when not root. */
export const userCommand = (packages, root) =>
  root
    ? `apt-get update && apt-get install -y ${packages.join(" ")}`
    : `sudo apt-get update && sudo apt-get install -y ${packages.join(" ")}`

/**
 * The pure part. `present(id)` says whether an item is there; `root`, `apt` (apt-get is usable), `install`
 * (installing is allowed: NODEMEND_PREREQS is not `check`), `platform`.
 * Returns `apt` (Debian packages to install now, sorted), `aptCommand` (or null), `venv` (moto to install into
 * its virtual environment after apt), `errors` (one line per missing item a required phase needs, or per
 * required phase that needs root) with `fix` (the commands that provide them), and `skips` ({ phase: reason } for the optional phases left out).
 */
export function plan({ phases, present, root = false, apt = false, install = true, platform = "linux" }) {
  const canInstall = root && apt && install
  const toInstall = []
  let venv = false
  const errors = []
  const fixPackages = []
  const fixManual = []
  const skips = {}
  for (const name of phases) {
    const phase = PHASES[name]
    if (!phase) throw new Error(`unknown prerequisite phase ${name}`)
    if (phase.root && (platform !== "linux" || !root)) {
      const why = "it needs root on Linux"
      if (phase.optional) skips[name] = why
      else errors.push(`${phase.title}: ${why}`)
      continue
    }
    // An item's own needs (moto's virtual environment needs python3-venv) count when the item is missing.
    const missing = []
    for (const id of phase.items) {
      if (present(id)) continue
      missing.push(id)
      const need = ITEMS[id].needs
      if (need && !present(need)) missing.push(need)
    }
    if (missing.length === 0) continue
    const byApt = missing.filter((id) => ITEMS[id].apt)
    const byVenv = missing.filter((id) => ITEMS[id].venv)
    const manual = missing.filter((id) => !ITEMS[id].apt && !ITEMS[id].venv)
    if (manual.length === 0 && (byApt.length === 0 || canInstall) && (byVenv.length === 0 || install)) {
      toInstall.push(...byApt.map((id) => ITEMS[id].apt))
      if (byVenv.length) venv = true
      continue
    }
    const packages = uniq(byApt.map((id) => ITEMS[id].apt)).sort()
    const how = [
      ...(packages.length
        ? [
            apt
              ? `run: ${userCommand(packages, root)}`
              : `install (Debian package names): ${packages.join(" ")}`
          ]
        : []),
      ...manual.map((id) => `${ITEMS[id].command ?? id}: ${ITEMS[id].howto}`),
      // When installing is allowed, the virtual environment is made here once python3-venv is there.
      ...(install
        ? []
        : byVenv.map(
            (id) => `${ITEMS[id].command ?? id}: pip install '${ITEMS[id].venv}' (in a virtual environment)`
          ))
    ]
    if (phase.optional) {
      const names = missing.map((id) => ITEMS[id].command ?? id).join(", ")
      skips[name] = `missing ${names} (${how.join("; ")})${phase.skips ? `; ${phase.skips}` : ""}`
    } else {
      for (const id of missing) errors.push(describe(id))
      fixPackages.push(...packages)
      fixManual.push(...manual.map((id) => `${ITEMS[id].command ?? id}: ${ITEMS[id].howto}`))
    }
  }
  const packages = uniq(toInstall).sort()
  const fixApt = uniq(fixPackages).sort()
  return {
    apt: packages,
    aptCommand: packages.length ? aptCommand(packages) : null,
    venv,
    errors: uniq(errors),
    fix: [
      ...(fixApt.length
        ? [apt ? userCommand(fixApt, root) : `install (Debian package names): ${fixApt.join(" ")}`]
        : []),
      ...uniq(fixManual)
    ],
    skips
  }
}

// --------------------------------------------------------------------------------------------- probes

const cacheRoot = () =>
  process.env.NODEMEND_CACHE_DIR || join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "nodemend")

/** moto's virtual environment, and a directory holding only its moto_server (what goes on PATH). */
export const motoDir = () => join(cacheRoot(), `moto-${MOTO_VERSION}`)
export const motoPathDir = () => join(motoDir(), "path")

const executable = (p) => {
  try {
    accessSync(p, constants.X_OK)
    return true
  } catch {
    return false
  }
}

export const onPath = (cmd, path = process.env.PATH ?? "") =>
  path
    .split(delimiter)
    .filter(Boolean)
    .some((d) => executable(join(d, cmd)))

/** The local Go's version ([major, minor]), without a toolchain switch; null when there is no go. */
const goVersion = () => {
  const r = spawnSync("go", ["env", "GOVERSION"], {
    cwd: tmpdir(),
    encoding: "utf8",
    env: { ...process.env, GOTOOLCHAIN: "local" }
  })
  const m = r.status === 0 ? /^go(\d+)\.(\d+)/.exec(r.stdout.trim()) : null
  return m ? [Number(m[1]), Number(m[2])] : null
}

/** Whether the item is on this machine (NODEMEND_PREREQS_ABSENT aside). */
export function probe(id) {
  const i = ITEMS[id]
  if (i.special === "go") {
    const v = onPath("go") ? goVersion() : null
    return v !== null && (v[0] > GO_MIN[0] || (v[0] === GO_MIN[0] && v[1] >= GO_MIN[1]))
  }
  if (i.special === "moto") return onPath("moto_server") || executable(join(motoPathDir(), "moto_server"))
  if (i.command) return onPath(i.command)
  if (i.files) return i.files.some(executable)
  if (i.python)
    return onPath("python3") && spawnSync("python3", ["-c", i.python], { stdio: "ignore" }).status === 0
  return false
}

const say = (msg) => process.stderr.write(`[prereqs] ${msg}\n`)

/** Installs moto into its virtual environment and links its moto_server into motoPathDir(); the error, or null. */
function installMoto() {
  const dir = motoDir()
  const cmd = `python3 -m venv ${join(dir, "venv")} && ${join(dir, "venv", "bin", "pip")} install --quiet --disable-pip-version-check '${ITEMS.moto_server.venv}'`
  say(`$ ${cmd}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const r = spawnSync("sh", ["-c", cmd], { stdio: "inherit" })
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    return `\`${cmd}\` failed (exit ${r.status})`
  }
  mkdirSync(motoPathDir(), { recursive: true })
  symlinkSync(join(dir, "venv", "bin", "moto_server"), join(motoPathDir(), "moto_server"))
  return null
}

const machine = (phases, install) => {
  const absent = new Set((process.env.NODEMEND_PREREQS_ABSENT ?? "").split(",").filter(Boolean))
  for (const id of absent) if (!ITEMS[id]) throw new Error(`NODEMEND_PREREQS_ABSENT: unknown item ${id}`)
  const context = {
    phases,
    root: process.getuid?.() === 0,
    apt: onPath("apt-get"),
    install: install && process.env.NODEMEND_PREREQS !== "check",
    platform: process.platform
  }
  return { context, first: plan({ ...context, present: (id) => !absent.has(id) && probe(id) }) }
}

/** An Error whose message is the whole story (what is missing, the command): print it without a stack. */
const prereqsError = (msg) => Object.assign(new Error(msg), { name: "PrereqsError" })

const cannotRun = (entry, p) =>
  `${entry} cannot run on this machine:\n  ${p.errors.join("\n  ")}\nto fix it:\n  ${p.fix.join("\n  ")}`

/** Checks what `phases` need without installing anything: throws an Error naming what is missing and the fix. */
export function requirePrereqs(phases, { entry = "this command" } = {}) {
  const { first } = machine(phases, false)
  if (first.errors.length) throw prereqsError(cannotRun(entry, first))
  return { skips: first.skips }
}

/**
 * Checks (and, as root with apt-get, installs) what `phases` need. Exits the process with the command to run when
 * a required phase cannot run (throws instead with `throwOnMissing`); returns { skips } for the optional phases
 * left out. Puts moto's directory on process.env.PATH when moto comes from the cache, so the tests'
 * `command -v moto_server` finds it.
 */
export function ensurePrereqs(phases, { entry = "this command", throwOnMissing = false } = {}) {
  const stop = (msg) => {
    if (throwOnMissing) throw prereqsError(msg)
    say(msg)
    process.exit(1)
  }
  const { context, first: p } = machine(phases, true)
  if (p.errors.length) stop(cannotRun(entry, p))
  const skips = { ...p.skips }
  if (p.aptCommand) {
    say(`installing what is missing: ${p.aptCommand}`)
    const r = spawnSync("sh", ["-c", p.aptCommand], { stdio: "inherit" })
    if (r.status !== 0) stop(`\`${p.aptCommand}\` failed (exit ${r.status})`)
  }
  if (p.venv && !probe("moto_server")) {
    let failed = "python3-venv is not installed"
    if (probe("python3-venv"))
      try {
        failed = installMoto()
      } catch (e) {
        failed = e?.message ?? String(e)
      }
    if (failed) skips.moto = `moto not installed: ${failed}; ${PHASES.moto.skips}`
  }
  if (!onPath("moto_server") && probe("moto_server"))
    process.env.PATH = `${motoPathDir()}${delimiter}${process.env.PATH ?? ""}`
  // After installing: check again, for real (a package that does not provide what it should is an error here).
  if (p.aptCommand) {
    const after = plan({ ...context, install: false, present: probe })
    if (after.errors.length) stop(`still missing after ${p.aptCommand}:\n  ${after.errors.join("\n  ")}`)
    for (const [name, why] of Object.entries(after.skips)) skips[name] ??= why
  }
  for (const [name, why] of Object.entries(skips)) say(`${PHASES[name].title}: ${why}`)
  return { skips }
}
