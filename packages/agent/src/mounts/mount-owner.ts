/**
 * Whose filesystem a block device carries, from the host's mount table: the node's own (the root, kubelet's
 * and containerd's directories, the logs, the instance store) or a Kubernetes volume's (a PersistentVolume
 * or an inline volume that kubelet mounted for a pod). Pure: the table comes from mountinfo.ts.
 *
 * Kubelet's volume paths (root dir /var/lib/kubelet, pkg/volume/csi and pkg/volume/util in kubernetes):
 *   pods/<uid>/volumes/<plugin~name>/<volume>[/mount]       a pod's volume; <volume> is spec.Name(): the PV's name
 *                                                           for a PV-backed volume, the pod's volume name inline
 *   pods/<uid>/volume-subpaths/<name>/<container>/<n>       a subPath bind mount (<name>: the pod's volume name)
 *   plugins/kubernetes.io/csi/<driver>/<sha256(volumeHandle)>/globalmount   CSI staging, kubelet >= 1.24 (#107065)
 *   plugins/kubernetes.io/csi/pv/<pv>/globalmount           CSI staging, kubelet < 1.24 (makeDeviceMountPath)
 *   plugins/kubernetes.io/<plugin>/mounts/<volume>          an in-tree plugin's global mount (aws-ebs: aws/<az>/vol-...)
 */
import type { Mount } from "./mountinfo.ts"

/**
 * The node's own directories: the filesystem that holds one of them is the node's (found by the longest mount
 * point above it, so a data partition mounted at /local and bound onto /var counts too).
 */
export const NODE_PATHS = [
  "/",
  "/var/lib/kubelet",
  "/var/lib/containerd",
  "/var/log",
  "/var/log/pods"
] as const

/**
 * Where the EKS AMIs mount the EC2 instance store: setup-local-disks (AL2) and nodeadm's
 * `spec.instance.localStorage` (AL2023) use `/mnt/k8s-disks/0` for the RAID0/RAID10 array (then bind
 * /var/lib/kubelet, /var/lib/containerd and /var/log/pods onto it) and `/mnt/k8s-disks/<n>` per disk in `Mount`
 * mode (awslabs/amazon-eks-ami templates/shared/runtime/bin/setup-local-disks, nodeadm/internal/system/local_disk.go).
 */
export const INSTANCE_STORE_DIR = "/mnt/k8s-disks"

const KUBELET = "/var/lib/kubelet"

export interface VolumeMount {
  readonly kind: "volume"
  readonly podUid?: string
  /** The PV's name (or an inline volume's name in the pod) where the path carries it. */
  readonly volume?: string
  readonly csiDriver?: string
  /** kubelet >= 1.24 stages a CSI volume under the SHA-256 of its volume handle, not the PV name. */
  readonly volumeHandleSha256?: string
  /** An in-tree plugin's global mount: the plugin and the volume ID in the path (`aws-ebs`, `aws/us-west-2b/vol-...`). */
  readonly plugin?: string
  readonly pluginVolume?: string
}

export type MountPointRole = { readonly kind: "instance-store" } | VolumeMount | { readonly kind: "other" }

const within = (path: string, dir: string): boolean =>
  path === dir || path.startsWith(dir === "/" ? "/" : `${dir}/`)

/** What one mount point is, from its path alone. */
export const classifyMountPoint = (mountPoint: string): MountPointRole => {
  if (within(mountPoint, INSTANCE_STORE_DIR)) return { kind: "instance-store" }
  if (!mountPoint.startsWith(`${KUBELET}/`)) return { kind: "other" }
  const p = mountPoint.slice(KUBELET.length + 1).split("/")
  if (p[0] === "pods" && p.length >= 5 && p[2] === "volumes")
    return { kind: "volume", podUid: p[1] as string, volume: p[4] as string }
  if (p[0] === "pods" && p.length >= 4 && p[2] === "volume-subpaths")
    return { kind: "volume", podUid: p[1] as string }
  if (p[0] !== "plugins" || p[1] !== "kubernetes.io" || p.length < 4) return { kind: "other" }
  if (p[2] === "csi" && p.length === 6 && p[5] === "globalmount")
    return p[3] === "pv"
      ? { kind: "volume", volume: p[4] as string }
      : /^[0-9a-f]{64}$/.test(p[4] as string)
        ? { kind: "volume", csiDriver: p[3] as string, volumeHandleSha256: p[4] as string }
        : { kind: "other" }
  if (p[2] !== "csi" && p[3] === "mounts" && p.length >= 5)
    return { kind: "volume", plugin: p[2] as string, pluginVolume: p.slice(4).join("/") }
  return { kind: "other" }
}

/** Where a device's filesystem is mounted, and so whose it is. */
export type DevicePlacement =
  /** It holds one of the node's own directories (`holds`) or is instance store. */
  | { readonly kind: "node"; readonly holds: string; readonly mountPoint: string }
  /** Mounted only for Kubernetes volumes (and elsewhere, perhaps, but never under a node directory). */
  | {
      readonly kind: "volume"
      readonly mountPoints: readonly string[]
      readonly volume: Omit<VolumeMount, "kind">
    }
  /** Mounted, but neither the node's nor a volume's (a disk the host mounted at /data, say). */
  | { readonly kind: "other"; readonly mountPoints: readonly string[] }
  /** Not in the mount table: unmounted already. */
  | { readonly kind: "unmapped" }

/** The mount that holds `path`: the longest mount point above it, the last mounted of equals (it is on top). */
export const mountHolding = (table: readonly Mount[], path: string): Mount | undefined => {
  let best: Mount | undefined
  for (const m of table)
    if (within(path, m.mountPoint) && (best === undefined || m.mountPoint.length >= best.mountPoint.length))
      best = m
  return best
}

const sameDevice = (m: Mount, device: string, devNumber: string | undefined): boolean =>
  `${m.major}:${m.minor}` === devNumber || m.source === `/dev/${device}`

/**
 * Places the kernel's device name (`nvme1n1`, `md127`, `dm-0`): its mounts are those whose source is
 * `/dev/<device>` or whose major:minor is `devNumber` (from sysfs; catches `/dev/mapper/...` and `/dev/root`).
 * The node's own filesystem wins over any volume mount of the same device: kubelet bind-mounts the root
 * filesystem into pods too (hostPath and emptyDir subPaths).
 */
export const placeDevice = (
  table: readonly Mount[],
  device: string,
  devNumber: string | undefined
): DevicePlacement => {
  const mounts = table.filter((m) => sameDevice(m, device, devNumber))
  if (mounts.length === 0) return { kind: "unmapped" }
  for (const path of NODE_PATHS) {
    const holder = mountHolding(table, path)
    if (holder !== undefined && mounts.includes(holder))
      return { kind: "node", holds: path, mountPoint: holder.mountPoint }
  }
  const roles = mounts.map((m) => ({ m, role: classifyMountPoint(m.mountPoint) }))
  const store = roles.find((r) => r.role.kind === "instance-store")
  if (store !== undefined) return { kind: "node", holds: INSTANCE_STORE_DIR, mountPoint: store.m.mountPoint }
  const volumes = roles.filter((r) => r.role.kind === "volume")
  if (volumes.length === 0) return { kind: "other", mountPoints: mounts.map((m) => m.mountPoint) }
  // The staging mount and the pod's mount of one volume each tell part of it (driver and hash; PV and pod).
  const volume: Record<string, string> = {}
  for (const { role } of volumes)
    for (const [k, v] of Object.entries(role))
      if (k !== "kind" && volume[k] === undefined) volume[k] = v as string
  return { kind: "volume", mountPoints: volumes.map((r) => r.m.mountPoint), volume }
}
