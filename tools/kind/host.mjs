// What a kind cluster under podman changes on the host, recorded before `up` and undone by `down`, as the real
// node's down does (tools/cluster/realnode.mjs). The kind nodes are privileged containers: their kubelets and
// kube-proxies write the host's sysctls (kernel.panic, vm.overcommit_memory, ...), netavark turns on forwarding
// and adds NETAVARK chains, podman leaves cgroups (libpod_parent), network namespaces and overlay mounts, and kind
// needs /lib/modules to exist. Sysctls: every global one (kernel, vm, net core/ipv4/ipv6 all+default, bridge,
// conntrack) is recorded, and any that changed is written back; what cannot be undone is printed.
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, readdirSync, rmSync, rmdirSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { mountsUnder, removeCgroupTree } from "../cluster/host.mjs"
import { PODMAN_CNI_CONFLIST, PODMAN_RUNROOT } from "./podman.mjs"

const CGROUP_ROOT = "/sys/fs/cgroup"
const PODMAN_CGROUP = "libpod_parent"
const SYSCTL_ROOTS = [
  "kernel",
  "vm",
  "net/core",
  "net/ipv4",
  "net/ipv6/conf/all",
  "net/ipv6/conf/default",
  "net/bridge"
]
const EXTRA_SYSCTLS = ["net/netfilter/nf_conntrack_max"]
/** Per-interface and per-neighbour tables (interfaces come and go) and values the kernel changes on its own. */
const VOLATILE =
  /^net\/ipv4\/(conf|neigh)\/(?!all\/|default\/)|^kernel\/(random|ns_last_pid|pty\/nr|tainted|sched_domain)|^vm\/(stat_refresh|drop_caches|compact_memory)|^net\/ipv4\/(tcp_mem|udp_mem)$/
const RUN_NETNS = "/run/netns"
const CHAIN = /^:((?:NETAVARK|KUBE|CNI|KIND)[-_][\w-]*)/

const trySh = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  } catch {
    return undefined
  }
}

/** Every readable, writable global sysctl under SYSCTL_ROOTS: { "kernel/panic": "0", ... }. */
export function readSysctls(root = "/proc/sys") {
  const out = {}
  const walk = (rel) => {
    const full = join(root, rel)
    let st
    try {
      st = statSync(full)
    } catch {
      return
    }
    if (st.isDirectory()) {
      for (const e of readdirSync(full)) walk(`${rel}/${e}`)
      return
    }
    if (VOLATILE.test(rel) || !(st.mode & 0o200)) return
    try {
      out[rel] = readFileSync(full, "utf8").trim()
    } catch {}
  }
  for (const r of [...SYSCTL_ROOTS, ...EXTRA_SYSCTLS]) walk(r)
  return out
}

/** The sysctls whose value differs from `before` (pure). */
export function changedSysctls(before, now) {
  return Object.entries(before)
    .filter(([k, v]) => now[k] !== undefined && now[k] !== v)
    .map(([k, v]) => ({ key: k.replaceAll("/", "."), path: k, was: v, now: now[k] }))
}

/** NETAVARK/KUBE/CNI chains per iptables family: `cmd table/chain`. */
function chains() {
  const out = []
  for (const cmd of ["iptables", "ip6tables"]) {
    let table = ""
    for (const line of (trySh(`${cmd}-save`, []) ?? "").split("\n")) {
      if (line.startsWith("*")) table = line.slice(1)
      const m = line.match(CHAIN)
      if (m) out.push(`${cmd} ${table}/${m[1]}`)
    }
  }
  return out
}

/** Removes chains that were not there before: first the rules jumping to them, then the chains. */
function removeNewChains(before) {
  const added = chains().filter((c) => !before.includes(c))
  for (const cmd of ["iptables", "ip6tables"]) {
    const mine = added.filter((c) => c.startsWith(`${cmd} `)).map((c) => c.slice(cmd.length + 1))
    if (!mine.length) continue
    let table = ""
    for (const line of (trySh(`${cmd}-save`, []) ?? "").split("\n")) {
      if (line.startsWith("*")) table = line.slice(1)
      const jump = line.match(/^-A (\S+) (.*-j (\S+))$/)
      if (jump && mine.includes(`${table}/${jump[3]}`) && !mine.includes(`${table}/${jump[1]}`))
        trySh("sh", ["-c", `${cmd} -w -t ${table} -D ${jump[1]} ${jump[2]}`])
    }
    for (const op of ["-F", "-X"])
      for (const c of mine) {
        const [t, chain] = c.split("/")
        trySh(cmd, ["-w", "-t", t, op, chain])
      }
  }
}

const isMount = (dir) => mountsUnder([dir]).includes(dir)

/** podman's network namespaces (netns-<uuid>) that no container uses any more. */
const netnsMounts = () => mountsUnder(["/run/netns"]).filter((m) => /\/netns-[\w-]+$/.test(m))

const podmanCgroups = () =>
  readdirSync(CGROUP_ROOT).filter((c) => existsSync(join(CGROUP_ROOT, c, PODMAN_CGROUP)))

/** Records what `down` restores; refuses when podman cgroups or netavark chains say another kind runs here. */
export function recordHostState(file, { etcCni = existsSync("/etc/cni") } = {}) {
  const state = {
    sysctls: readSysctls(),
    chains: chains(),
    libModules: existsSync("/lib/modules"),
    etcCni,
    cgroups: podmanCgroups(),
    netns: netnsMounts(),
    // podman bind-mounts /run/netns on itself (creating it if need be) for the containers' namespaces.
    runNetns: { exists: existsSync(RUN_NETNS), mounted: isMount(RUN_NETNS) }
  }
  writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`)
  return state
}

export const readHostState = (file) => {
  try {
    return JSON.parse(readFileSync(file, "utf8"))
  } catch {
    return undefined
  }
}

/** kind bind-mounts /lib/modules into every node; a machine without kernel modules has no such directory. */
export function ensureLibModules() {
  if (!existsSync("/lib/modules")) execFileSync("mkdir", ["-p", "/lib/modules"])
}

/** Undoes what the cluster changed (after its containers and network are gone); returns what is left. */
export function restoreHost(state, podmanDirs) {
  for (const m of netnsMounts().filter((m) => !state.netns.includes(m))) {
    trySh("umount", ["-l", m])
    rmSync(m, { force: true })
  }
  for (const m of mountsUnder([PODMAN_RUNROOT, ...podmanDirs])) trySh("umount", ["-l", m])
  rmSync(PODMAN_RUNROOT, { recursive: true, force: true })
  if (state.runNetns?.mounted === false && isMount(RUN_NETNS)) trySh("umount", [RUN_NETNS])
  if (state.runNetns?.exists === false && existsSync(RUN_NETNS) && readdirSync(RUN_NETNS).length === 0)
    rmdirSync(RUN_NETNS)
  removeNewChains(state.chains)
  for (const c of podmanCgroups())
    if (!state.cgroups.includes(c)) removeCgroupTree(join(CGROUP_ROOT, c, PODMAN_CGROUP))
  if (!state.libModules && existsSync("/lib/modules") && readdirSync("/lib/modules").length === 0)
    rmdirSync("/lib/modules")
  // podman creates /etc/cni/net.d/cni.lock even with netavark: removed when kind:up found no /etc/cni and
  // nothing else was put there since.
  if (state.etcCni === false) {
    rmSync("/etc/cni/net.d/cni.lock", { force: true })
    for (const d of ["/etc/cni/net.d", "/etc/cni"])
      if (existsSync(d) && readdirSync(d).length === 0) rmdirSync(d)
  }
  // One that cannot be written back stays in the leftovers `down` prints.
  for (const s of changedSysctls(state.sysctls, readSysctls()))
    try {
      writeFileSync(join("/proc/sys", s.path), s.was)
    } catch {}
  return leftovers(state, podmanDirs)
}

/** What the host still differs in from `state` (empty when `down` cleaned up). */
export function leftovers(state, podmanDirs) {
  const out = []
  for (const s of changedSysctls(state.sysctls, readSysctls()))
    out.push(`sysctl ${s.key}=${s.now} (was ${s.was})`)
  const added = chains().filter((c) => !state.chains.includes(c))
  if (added.length) out.push(`chains ${added.join(", ")}`)
  const mounts = mountsUnder([PODMAN_RUNROOT, ...podmanDirs])
  if (mounts.length) out.push(`mounts ${mounts.join(" ")}`)
  if (state.runNetns?.mounted === false && isMount(RUN_NETNS)) out.push(`mount ${RUN_NETNS}`)
  if (existsSync(PODMAN_RUNROOT)) out.push(PODMAN_RUNROOT)
  const netns = netnsMounts().filter((m) => !state.netns.includes(m))
  if (netns.length) out.push(`network namespaces ${netns.join(" ")}`)
  const cgroups = podmanCgroups().filter((c) => !state.cgroups.includes(c))
  if (cgroups.length) out.push(`cgroups ${cgroups.map((c) => `${c}/${PODMAN_CGROUP}`).join(" ")}`)
  if (!state.libModules && existsSync("/lib/modules")) out.push("/lib/modules (created for kind)")
  if (existsSync(PODMAN_CNI_CONFLIST)) out.push(PODMAN_CNI_CONFLIST)
  if (state.etcCni === false && existsSync("/etc/cni")) out.push("/etc/cni (created by podman)")
  return out
}
