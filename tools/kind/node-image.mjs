// The kind node image, assembled locally: `kind build node-image` needs a Docker daemon, docker.io and
// registry.k8s.io, none of which this project's machines reach (../shared/reference/kind.md). What kind's
// images/base/Dockerfile does is done here on a debootstrapped Debian, with Debian's containerd, runc and CNI
// plugins instead of kind's own builds, and the Kubernetes binaries from the project's caches. The images kubeadm
// runs (control plane, etcd, coredns, kube-proxy, pause) are built by buildah from scratch and preloaded at boot
// by a oneshot unit (kind's builder imports them at build time, which needs containerd running in a container).
// kindnetd is left out (its module cannot be fetched here): up.mjs configures a ptp CNI and routes per node.
import { execFileSync } from "node:child_process"
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync
} from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"
import { acquireLock, build as buildControlPlane, fmt } from "../cluster/build.mjs"
import { buildNode } from "../cluster/realnode.mjs"
import { VERSIONS } from "../cluster/versions.mjs"
import { podmanEnv, storedImage } from "./podman.mjs"
import { IMAGE_STAMP, KIND_VERSIONS, imageStamp, kindCacheDir, localNodeImage } from "./versions.mjs"

/** What kind's base Dockerfile installs, less NFS/iSCSI/fuse-overlayfs/curl; plus Debian's runtime. */
const PACKAGES = [
  "systemd",
  "conntrack",
  "iptables",
  "nftables",
  "iproute2",
  "ethtool",
  "util-linux",
  "mount",
  "kmod",
  "libseccomp2",
  "pigz",
  "e2fsprogs",
  "bash",
  "ca-certificates",
  "procps",
  // kind's createContainer hook (mount-product-files.sh) runs jq for every container.
  "jq",
  "containerd",
  "runc",
  "containernetworking-plugins"
]
const CNI_PLUGINS = ["host-local", "loopback", "ptp", "portmap", "bridge"]
/** Trimmed from the kube-proxy image (a copy of the base: it needs iptables and its libraries, not the runtime). */
const PROXY_EXCLUDES = [
  "./usr/share/doc",
  "./usr/share/man",
  "./usr/share/locale",
  "./var/cache/apt",
  "./var/lib/apt/lists",
  "./usr/bin/containerd*",
  "./usr/lib/cni"
]

const log = (msg) => process.stderr.write(`[kind:image] ${msg}\n`)
const sh = (cmd, args, opts = {}) =>
  execFileSync(cmd, args, {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 26,
    ...opts
  })
const timed = (timings, name, fn) => {
  const t0 = Date.now()
  const out = fn()
  timings[name] = Math.round((Date.now() - t0) / 1000)
  log(`${name}: ${fmt(Date.now() - t0)}`)
  return out
}

/** The Debian mirror apt uses here (deb822 or one-line sources), else deb.debian.org. */
export function debianMirror(sources = readSources()) {
  const m =
    sources.match(/^URIs:\s*(\S+\/debian)\s*$/m) ?? sources.match(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\s/m)
  return m?.[1] ?? "http://deb.debian.org/debian"
}
function readSources() {
  const files = [
    "/etc/apt/sources.list",
    ...listDir("/etc/apt/sources.list.d").map((f) => join("/etc/apt/sources.list.d", f))
  ]
  return files
    .filter((f) => /\.(list|sources)$/.test(f) && existsSync(f))
    .map((f) => readFileSync(f, "utf8"))
    .join("\n")
}
const listDir = (d) => (existsSync(d) ? readdirSync(d) : [])

/** kind's module source (images/base/files), from the Go module cache `go install sigs.k8s.io/kind` filled. */
function kindBaseFiles() {
  const modCache =
    sh("go", ["env", "GOMODCACHE"], { env: { ...process.env, GOTOOLCHAIN: "local" } }).trim() ||
    join(homedir(), "go", "pkg", "mod")
  const dir = join(modCache, `sigs.k8s.io/kind@${KIND_VERSIONS.kind}`, "images", "base", "files")
  if (!existsSync(dir)) throw new Error(`kind's base files are missing from the Go module cache: ${dir}`)
  return dir
}

/** debootstrap minbase with PACKAGES (kept across failed runs once complete: the slowest download). */
function debootstrap(work) {
  const rootfs = join(work, "rootfs")
  if (existsSync(join(work, "debootstrap.done"))) return rootfs
  rmSync(rootfs, { recursive: true, force: true })
  sh(
    "debootstrap",
    ["--variant=minbase", `--include=${PACKAGES.join(",")}`, KIND_VERSIONS.debian, rootfs, debianMirror()],
    { stdio: ["ignore", "ignore", "inherit"] }
  )
  writeFileSync(join(work, "debootstrap.done"), "")
  return rootfs
}

/** kind's images/base Dockerfile steps (files, unit cleanup, enabled units, cri-base.json), in a chroot. */
function applyKindBase(rootfs) {
  const files = kindBaseFiles()
  cpSync(files, rootfs, { recursive: true, force: true })
  for (const f of [
    ...listDir(join(files, "usr/local/bin")).map((f) => `usr/local/bin/${f}`),
    ...listDir(join(files, "kind/bin")).map((f) => `kind/bin/${f}`)
  ])
    chmodSync(join(rootfs, f), 0o755)
  const chroot = (cmd) => sh("chroot", [rootfs, "/bin/sh", "-euc", cmd])
  chroot(`find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete
rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* /lib/systemd/system/local-fs.target.wants/*
rm -f /lib/systemd/system/sockets.target.wants/*udev* /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*
echo ReadKMsg=no >> /etc/systemd/journald.conf
ln -sf /usr/lib/systemd/systemd /sbin/init
mkdir -p /etc/kubernetes/manifests /opt/cni/bin /kind/images
ln -sf /usr/bin/containerd /usr/local/bin/containerd`)
  // kind's runtime spec: product_uuid/name mounted per container by a hook, no rlimits (root cannot raise them here).
  const spec = JSON.parse(chroot("ctr oci spec"))
  spec.hooks = {
    ...spec.hooks,
    createContainer: [...(spec.hooks?.createContainer ?? []), { path: "/kind/bin/mount-product-files.sh" }]
  }
  delete spec.process.rlimits
  writeFileSync(join(rootfs, "etc/containerd/cri-base.json"), `${JSON.stringify(spec, null, 2)}\n`)
  // runc cannot lower a container's oom_score_adj below containerd's without CAP_SYS_RESOURCE (as on the real node).
  const config = join(rootfs, "etc/containerd/config.toml")
  writeFileSync(
    config,
    readFileSync(config, "utf8").replace("restrict_oom_score_adj = false", "restrict_oom_score_adj = true")
  )
  for (const p of CNI_PLUGINS) copyFileSync(join(rootfs, "usr/lib/cni", p), join(rootfs, "opt/cni/bin", p))
}

/** The preload unit: imports /kind/images/*.tar into containerd before kubelet can start a static pod. */
const PRELOAD_UNIT = `[Unit]
Description=Import the preloaded images in /kind/images (nodemend's locally assembled kind node image)
Requires=containerd.service
After=containerd.service
Before=kubelet.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -euc 'for f in /kind/images/*.tar; do ctr --namespace=k8s.io images import --all-platforms "$f"; done'

[Install]
WantedBy=multi-user.target
`

function installKubernetes(rootfs, { tools, node }) {
  for (const b of ["kubeadm", "kubectl"]) copyFileSync(join(tools, b), join(rootfs, "usr/bin", b))
  copyFileSync(join(node, "kubelet"), join(rootfs, "usr/bin/kubelet"))
  copyFileSync(join(tools, "crictl"), join(rootfs, "usr/local/bin/crictl"))
  for (const b of ["kubeadm", "kubectl", "kubelet"]) chmodSync(join(rootfs, "usr/bin", b), 0o755)
  writeFileSync(join(rootfs, "kind/version"), `${VERSIONS.kubernetes}\n`)
  writeFileSync(join(rootfs, "etc/systemd/system/kind-preload-images.service"), PRELOAD_UNIT)
  sh("chroot", [
    rootfs,
    "/bin/sh",
    "-euc",
    "systemctl enable kubelet.service containerd.service undo-mount-hacks.service kind-preload-images.service && systemctl mask systemd-binfmt.service"
  ])
}

/** One buildah-made image per component, as kubeadm names them; archives go to /kind/images. */
function imageList({ tools, cp, node }, proxyRootTar) {
  const k8s = (name) => ({
    ref: `registry.k8s.io/${name}:${VERSIONS.kubernetes}`,
    files: [[join(cp, name), `/usr/local/bin/${name}`]],
    entrypoint: `/usr/local/bin/${name}`
  })
  return [
    k8s("kube-apiserver"),
    k8s("kube-controller-manager"),
    k8s("kube-scheduler"),
    {
      ref: `registry.k8s.io/etcd:${KIND_VERSIONS.etcdImageTag}`,
      files: [[join(cp, "etcd"), "/usr/local/bin/etcd"]],
      entrypoint: "/usr/local/bin/etcd"
    },
    {
      ref: `registry.k8s.io/coredns/coredns:${KIND_VERSIONS.coredns}`,
      files: [[join(tools, "coredns"), "/coredns"]],
      entrypoint: "/coredns"
    },
    ...KIND_VERSIONS.pauseTags.map((t) => ({
      ref: `registry.k8s.io/pause:${t}`,
      files: [[join(node, "pause"), "/pause"]],
      entrypoint: "/pause"
    })),
    {
      ref: `registry.k8s.io/kube-proxy:${VERSIONS.kubernetes}`,
      base: proxyRootTar,
      files: [[join(node, "kube-proxy"), "/usr/local/bin/kube-proxy"]],
      entrypoint: "/usr/local/bin/kube-proxy"
    }
  ]
}

/** Builds each image from scratch with buildah (vfs storage of its own) into an OCI archive under `outDir`. */
function buildImages(images, storage, outDir) {
  const buildah = (args) =>
    sh("buildah", [
      "--root",
      join(storage, "root"),
      "--runroot",
      join(storage, "run"),
      "--storage-driver",
      "vfs",
      ...args
    ]).trim()
  try {
    for (const img of images) {
      const c = buildah(["from", "scratch"])
      if (img.base) buildah(["add", c, img.base, "/"])
      for (const [src, dst] of img.files) buildah(["copy", "--chmod", "0755", c, src, dst])
      buildah([
        "config",
        "--env",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "--entrypoint",
        JSON.stringify([img.entrypoint]),
        c
      ])
      buildah(["commit", "--quiet", "--timestamp", "0", "--rm", c, img.ref])
      const file = join(outDir, `${img.ref.replace(/[/:]/g, "_")}.tar`)
      buildah(["push", "--quiet", "--format", "oci", img.ref, `oci-archive:${file}:${img.ref}`])
    }
  } finally {
    rmSync(storage, { recursive: true, force: true })
  }
}

/** Packs the rootfs into the podman image kind runs (ENTRYPOINT, ENV and STOPSIGNAL of kind's base image). */
function importImage(rootfs, ref) {
  const env = podmanEnv()
  execFileSync(
    "sh",
    [
      "-euc",
      `tar -C "$1" -c . | podman import --quiet --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' --change 'ENV container=docker' --change 'STOPSIGNAL SIGRTMIN+3' - "$2"`,
      "import",
      rootfs,
      ref
    ],
    { env, stdio: ["ignore", "ignore", "inherit"] }
  )
}

/** Removes the node images of other cache keys from podman's storage (1.3 GB each). */
function removeOtherImages(ref) {
  const env = podmanEnv()
  const repo = ref.split(":")[0]
  const refs = sh("podman", ["images", "--format", "{{.Repository}}:{{.Tag}}", repo], { env }).split("\n")
  for (const r of refs.filter((r) => r.startsWith(`${repo}:`) && r !== ref))
    sh("podman", ["rmi", "--force", r], { env })
}

/** Builds (or finds cached) the node image; returns its reference. */
export async function buildNodeImage(tools) {
  const ref = localNodeImage()
  if (imageStamp()?.image === ref && storedImage(ref)) return ref
  const keyDir = kindCacheDir()
  const lockDir = `${keyDir}.image.lock`
  await acquireLock(lockDir, log)
  try {
    if (imageStamp()?.image === ref && storedImage(ref)) return ref
    const t0 = Date.now()
    const timings = {}
    const cp = await buildControlPlane()
    const node = await buildNode()
    const bins = { tools, cp, node }
    const work = join(keyDir, "work")
    mkdirSync(work, { recursive: true })
    log(`assembling ${ref} in ${work}`)
    const rootfs = timed(timings, "debootstrap", () => debootstrap(work))
    timed(timings, "kind base", () => applyKindBase(rootfs))
    const proxyTar = join(work, "proxy-base.tar")
    // kind's entrypoint picked iptables-legacy in these node containers: kube-proxy (in the node's netns) the same.
    sh("chroot", [
      rootfs,
      "/bin/sh",
      "-euc",
      "update-alternatives --set iptables /usr/sbin/iptables-legacy && update-alternatives --set ip6tables /usr/sbin/ip6tables-legacy"
    ])
    timed(timings, "kube-proxy base", () =>
      sh("tar", ["-C", rootfs, ...PROXY_EXCLUDES.map((e) => `--exclude=${e}`), "-cf", proxyTar, "."])
    )
    timed(timings, "images", () =>
      buildImages(imageList(bins, proxyTar), join(work, "buildah"), join(rootfs, "kind/images"))
    )
    timed(timings, "kubernetes", () => installKubernetes(rootfs, bins))
    timed(timings, "podman import", () => importImage(rootfs, ref))
    rmSync(work, { recursive: true, force: true })
    removeOtherImages(ref)
    const stamp = {
      image: ref,
      builtAt: new Date().toISOString(),
      totalSeconds: Math.round((Date.now() - t0) / 1000),
      stepSeconds: timings
    }
    writeFileSync(join(keyDir, IMAGE_STAMP), `${JSON.stringify(stamp, null, 2)}\n`)
    log(`node image ${ref} built in ${fmt(Date.now() - t0)}`)
    return ref
  } finally {
    rmSync(lockDir, { recursive: true, force: true })
  }
}
