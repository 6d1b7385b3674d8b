// podman for kind on machines without Docker, configured as ../shared/reference/kind.md found necessary: its own
// containers.conf and storage (under ~/.cache/nodemend/kind-podman, so the node image survives between runs),
// runc (crun rejects hybrid cgroups), cgroupfs (no systemd as PID 1), netavark with its network files in our
// directory (never podman's CNI conflist in /etc/cni/net.d, which a real node's containerd reads), and ulimits
// within what root may set here (root lacks CAP_SYS_RESOURCE: podman's defaults fail with `error setting rlimit`).
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { podmanDir } from "./versions.mjs"

/** podman's run-time state (overlay mounts, container state): tmpfs, gone at reboot, removed by `down`. */
export const PODMAN_RUNROOT = "/run/nodemend-kind-podman"
/** The CNI file Debian's podman package installs; with netavark it is unused, and it must not stay there. */
export const PODMAN_CNI_CONFLIST = "/etc/cni/net.d/87-podman-bridge.conflist"

/** A hard limit of this process from /proc/self/limits (`Max open files`, `Max processes`). */
export function hardLimit(name, limits = readFileSync("/proc/self/limits", "utf8")) {
  const line = limits.split("\n").find((l) => l.startsWith(name))
  const hard = line?.slice(26).trim().split(/\s+/)[1]
  return hard === undefined || hard === "unlimited" ? undefined : Number(hard)
}

/** containers.conf: the ulimits are the machine's hard limits (nproc at most 32768, what conmon runs with). */
export function containersConf(dir, limits) {
  const nofile = hardLimit("Max open files", limits) ?? 1048576
  const nproc = Math.min(hardLimit("Max processes", limits) ?? 32768, 32768)
  return `# Written by tools/kind/podman.mjs.
[containers]
default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "${join(dir, "events.log")}"
tmp_dir = "${PODMAN_RUNROOT}/libpod-tmp"

[network]
network_backend = "netavark"
network_config_dir = "${join(dir, "networks")}"
`
}

export const storageConf = (dir) => `# Written by tools/kind/podman.mjs.
[storage]
driver = "overlay"
graphroot = "${join(dir, "storage")}"
runroot = "${PODMAN_RUNROOT}"
`

/** Writes podman's configuration and returns the environment every podman and kind command runs with. */
export function podmanEnv(dir = podmanDir()) {
  mkdirSync(join(dir, "networks"), { recursive: true })
  writeFileSync(join(dir, "containers.conf"), containersConf(dir))
  writeFileSync(join(dir, "storage.conf"), storageConf(dir))
  return {
    ...process.env,
    CONTAINERS_CONF: join(dir, "containers.conf"),
    CONTAINERS_STORAGE_CONF: join(dir, "storage.conf"),
    KIND_EXPERIMENTAL_PROVIDER: "podman"
  }
}

/** Whether a Docker daemon answers (a docker CLI alone is not enough: this machine has one without a daemon). */
export function dockerRuns() {
  try {
    execFileSync("docker", ["info", "--format", "{{.ServerVersion}}"], { stdio: "ignore", timeout: 10_000 })
    return true
  } catch {
    return false
  }
}

export const podmanInstalled = () => {
  try {
    execFileSync("podman", ["--version"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/**
 * Whether podman's storage (podmanEnv's) holds `ref`, read from its image list: no podman command, so no run-time
 * state (a probe that changes nothing on the host).
 */
export function storedImage(ref, dir = podmanDir()) {
  try {
    const images = JSON.parse(readFileSync(join(dir, "storage", "overlay-images", "images.json"), "utf8"))
    return images.some((i) => i.names?.includes(ref))
  } catch {
    return false
  }
}
