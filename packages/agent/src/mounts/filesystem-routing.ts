/**
 * Routes a filesystem fault by the device it names (issue #38): an XFS shutdown or an ext4 remount read-only
 * sets StorageReady=False (default action Replace) only when the filesystem is the node's own. A Kubernetes
 * volume's filesystem (one tenant's EBS volume) failing says nothing about the node: it becomes an Event naming
 * the device, the mount point and the volume and pod where the path tells, and the node is not replaced.
 *
 * A device the agent cannot place also becomes an Event (decision, docs/log-rules.md#filesystem-faults-by-device):
 * the node's own filesystems stay mounted for the node's life and a shut-down XFS or a read-only ext4 stays
 * mounted, so a device missing from mountinfo has been unmounted, as kubelet does with a volume whose pod went
 * away. Without a readable mountinfo nothing can be told apart, and replacing a healthy node for a volume is the
 * fault this guards against ("when in doubt do nothing"); the EKS agent itself reports no filesystem fault as
 * a condition (reference 2.7). The Event says which case it was, and an unreadable mountinfo is logged.
 */
import { Effect } from "effect"
import type { HostFiles } from "../checks/host-files.ts"
import type { Detection } from "../model.ts"
import { type DevicePlacement, placeDevice } from "./mount-owner.ts"
import { parseMountinfo } from "./mountinfo.ts"

/** The reasons whose subject is the block device of a filesystem (the kernel's `XFS (dev)`, `EXT4-fs (dev)`). */
export const FILESYSTEM_REASONS: ReadonlySet<string> = new Set([
  "XFSFilesystemShutdown",
  "FilesystemRemountedReadOnly",
  "Ext4FilesystemError",
  "Ext4FilesystemWarning"
])

/** What the agent found out about the device; `unreadable` when the host's mountinfo could not be read. */
export type Placement = DevicePlacement | { readonly kind: "unreadable"; readonly why: string }

const asEvent = (d: Detection, why: string): Detection => ({
  ...d,
  severity: "Event",
  message: `${d.message} (${why}: an Event, not a node condition)`
})

const describeVolume = (v: Extract<Placement, { kind: "volume" }>["volume"]): string =>
  [
    v.volume !== undefined ? `volume ${v.volume}` : undefined,
    v.podUid !== undefined ? `pod ${v.podUid}` : undefined,
    v.csiDriver !== undefined ? `CSI driver ${v.csiDriver}` : undefined,
    v.volumeHandleSha256 !== undefined ? `volume handle sha256 ${v.volumeHandleSha256}` : undefined,
    v.plugin !== undefined ? `${v.plugin} volume ${v.pluginVolume ?? "?"}` : undefined
  ]
    .filter((s) => s !== undefined)
    .join(", ")

/** Pure: a Condition-severity filesystem detection as the placement of its device routes it. */
export const routeByPlacement = (d: Detection, device: string, placement: Placement): Detection => {
  switch (placement.kind) {
    case "node":
      return d
    case "volume": {
      const [first, ...rest] = placement.mountPoints
      const more = rest.length === 0 ? "" : ` (+${rest.length} more)`
      return asEvent(
        d,
        `${device} is a Kubernetes volume's filesystem, not the node's: ${describeVolume(placement.volume)}; mounted at ${first}${more}`
      )
    }
    case "other":
      return asEvent(
        d,
        `${device} is mounted at ${placement.mountPoints.join(", ")}, none of the node's own filesystems`
      )
    case "unmapped":
      return asEvent(
        d,
        `${device} is not in the host's mountinfo (unmounted already), so it is not the node's`
      )
    case "unreadable":
      return asEvent(
        d,
        `the host's mountinfo could not be read (${placement.why}), so whose filesystem ${device} is is unknown`
      )
  }
}

/** A kernel device name that is safe to look up under /sys/class/block. */
const SYSFS_NAME = /^(?!\.\.?$)[\w.-]+$/

/** Reads the host's mount table (host PID 1's: /proc/self is the agent's own mount namespace) and places the device. */
export const placeHostDevice = (files: HostFiles, device: string): Effect.Effect<Placement> =>
  Effect.gen(function* () {
    const text = yield* files.text("proc/1/mountinfo")
    if (text === undefined)
      return { kind: "unreadable", why: `${files.path("proc/1/mountinfo")} not readable` } as const
    const { mounts, errors } = parseMountinfo(text)
    for (const e of errors)
      yield* Effect.logWarning("mountinfo line not understood; left out", {
        line: e.line,
        text: e.text,
        error: e.message
      })
    const dev = SYSFS_NAME.test(device)
      ? (yield* files.text(`sys/class/block/${device}/dev`))?.trim()
      : undefined
    return placeDevice(mounts, device, dev)
  })

/**
 * The routing step of the finding sink: a Condition-severity filesystem detection is placed by its subject
 * (the device) and goes on as a Condition only when the filesystem is the node's. Everything else passes as is.
 */
export const filesystemRouter =
  (files: HostFiles) =>
  (d: Detection): Effect.Effect<Detection> =>
    d.severity !== "Condition" || !FILESYSTEM_REASONS.has(d.reason)
      ? Effect.succeed(d)
      : d.subject === undefined
        ? Effect.succeed(asEvent(d, "the finding names no device, so it is not known to be the node's"))
        : placeHostDevice(files, d.subject).pipe(
            Effect.tap((p) =>
              p.kind === "unreadable"
                ? Effect.logWarning("filesystem fault not placed", { device: d.subject, why: p.why })
                : Effect.void
            ),
            Effect.map((p) => routeByPlacement(d, d.subject as string, p)),
            Effect.annotateLogs("component", "filesystem-routing")
          )
