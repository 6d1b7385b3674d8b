/**
 * A filesystem fault is routed by its device (issue #38): the kernel line through the real rule engine, the
 * real finding sink with the filesystem router over a host root holding a mount table (test/fixtures/mountinfo.ts)
 * and the ConditionWriter's state reducer; only the API calls are left out. The kernel wordings are those of
 * test/fixtures/log-lines.ts (cited there) with the fixture's device names.
 */
import { Effect, Result } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { parseConfigText } from "../../src/config/load.ts"
import type { AgentConfig } from "../../src/config/schema.ts"
import {
  applyFinding,
  type ConditionState,
  desiredConditions,
  emptyState
} from "../../src/k8s/condition-state.ts"
import { makeFindingSink } from "../../src/k8s/finding-sink.ts"
import type { Detection, Finding } from "../../src/model.ts"
import { filesystemRouter } from "../../src/mounts/filesystem-routing.ts"
import { classifyMountPoint } from "../../src/mounts/mount-owner.ts"
import { makeLogRuleEngine } from "../../src/rules/engine.ts"
import { type HostRoot, makeHostRoot } from "../checks/host-root.ts"
import {
  AL2_MOUNT_MODE,
  AL2023_RAID0,
  CSI_HANDLE_SHA,
  CSI_PV,
  INTREE_PV,
  LEGACY_CSI_PV,
  LEGACY_POD_UID,
  POD_UID,
  VAR_ON_LVM
} from "../fixtures/mountinfo.ts"

const config = (text: string): AgentConfig => {
  const r = parseConfigText(text, "c.yaml")
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

const xfsShutdown = (dev: string) =>
  `XFS (${dev}): Corruption of in-memory data (0x8) detected at xfs_defer_finish_noroll+0x323/0x450 (fs/xfs/libxfs/xfs_defer.c:721).  Shutting down filesystem.`
const remountedRo = (dev: string) => `EXT4-fs (${dev}): Remounting filesystem read-only`

let host: HostRoot | undefined
afterEach(() => host?.cleanup())

/** A host root with `mountinfo` as host PID 1's (absent: unreadable) and sysfs device numbers. */
const hostWith = (mountinfo: string | undefined, sysBlock: Record<string, string> = {}): HostRoot => {
  host = makeHostRoot()
  if (mountinfo !== undefined) host.write("proc/1/mountinfo", mountinfo)
  for (const [dev, majMin] of Object.entries(sysBlock))
    host.write(`sys/class/block/${dev}/dev`, `${majMin}\n`)
  return host
}

/** Runs kernel lines through the engine and the sink; returns StorageReady's status and the Events. */
const run = async (h: HostRoot, lines: readonly string[], cfg = config("")) => {
  let state: ConditionState = emptyState
  const events: Detection[] = []
  const sink = makeFindingSink(
    cfg,
    {
      submit: (fs: readonly Finding[]) =>
        Effect.sync(() => {
          for (const f of fs) state = applyFinding(state, f)
        })
    } as never,
    { record: (d) => Effect.sync(() => void events.push(d)) },
    filesystemRouter(h.files)
  )
  const engine = makeLogRuleEngine()
  for (const [i, text] of lines.entries())
    await Effect.runPromise(sink(engine.process({ source: "dmesg", text, timestampMs: 1_000 + i })))
  const storage = desiredConditions(state, new Set(["StorageReady"]), "b").get("StorageReady")!
  return { status: storage.status, reason: storage.reason, events }
}

describe("filesystem faults routed by device", () => {
  it("the root filesystem: StorageReady False, no Event", async () => {
    const r = await run(hostWith(AL2023_RAID0), [xfsShutdown("nvme0n1p1")])
    expect(r).toEqual({ status: "False", reason: "XFSFilesystemShutdown", events: [] })
  })

  it("the instance store: the RAID0 array under kubelet's directory, and a disk at /mnt/k8s-disks/<n>", async () => {
    expect(await run(hostWith(AL2023_RAID0), [xfsShutdown("md127")])).toMatchObject({
      status: "False",
      events: []
    })
    expect(await run(hostWith(AL2_MOUNT_MODE), [xfsShutdown("nvme4n1")])).toMatchObject({
      status: "False",
      events: []
    })
  })

  it("a CSI PersistentVolume (kubelet >= 1.24 staging path): an Event naming device, mount, PV and pod", async () => {
    const r = await run(hostWith(AL2023_RAID0), [xfsShutdown("nvme2n1")])
    expect(r.status).toBe("True")
    expect(r.events).toHaveLength(1)
    const e = r.events[0]!
    expect(e).toMatchObject({ reason: "XFSFilesystemShutdown", severity: "Event", subject: "nvme2n1" })
    expect(e.message).toContain("XFS shut down the filesystem on nvme2n1: Corruption of in-memory data (0x8)")
    expect(e.message).toContain(
      `volume ${CSI_PV}, pod ${POD_UID}, CSI driver ebs.csi.aws.com, volume handle sha256 ${CSI_HANDLE_SHA}`
    )
    expect(e.message).toContain(
      `mounted at /var/lib/kubelet/plugins/kubernetes.io/csi/ebs.csi.aws.com/${CSI_HANDLE_SHA}/globalmount (+1 more)`
    )
  })

  it("an in-tree aws-ebs volume and a CSI volume staged by kubelet < 1.24: Events naming PV and pod", async () => {
    const intree = await run(hostWith(AL2_MOUNT_MODE), [remountedRo("nvme3n1")])
    expect(intree.status).toBe("True")
    expect(intree.events.map((e) => [e.reason, e.severity])).toEqual([
      ["FilesystemRemountedReadOnly", "Event"]
    ])
    expect(intree.events[0]!.message).toContain(
      `volume ${INTREE_PV}, pod ${LEGACY_POD_UID}, aws-ebs volume aws/us-west-2b/vol-0d9f0816149eb2050`
    )
    const legacy = await run(hostWith(AL2_MOUNT_MODE), [remountedRo("nvme5n1")])
    expect(legacy.status).toBe("True")
    expect(legacy.events[0]!.message).toContain(`volume ${LEGACY_CSI_PV}, pod ${LEGACY_POD_UID}`)
    expect(legacy.events[0]!.message).toContain(
      `/var/lib/kubelet/plugins/kubernetes.io/csi/pv/${LEGACY_CSI_PV}/globalmount`
    )
  })

  it("a device the agent cannot map (unmounted already, or mountinfo unreadable): an Event, no condition", async () => {
    const gone = await run(hostWith(AL2023_RAID0), [xfsShutdown("nvme7n1")])
    expect(gone.status).toBe("True")
    expect(gone.events[0]).toMatchObject({ reason: "XFSFilesystemShutdown", severity: "Event" })
    expect(gone.events[0]!.message).toContain("nvme7n1 is not in the host's mountinfo (unmounted already)")
    const unreadable = await run(hostWith(undefined), [remountedRo("nvme0n1p1")])
    expect(unreadable.status).toBe("True")
    expect(unreadable.events[0]!.message).toContain("the host's mountinfo could not be read")
  })

  it("a disk mounted elsewhere is not the node's; one holding kubelet's directory through /var is (by device number)", async () => {
    const data = await run(hostWith(AL2_MOUNT_MODE), [xfsShutdown("nvme6n1")])
    expect(data.status).toBe("True")
    expect(data.events[0]!.message).toContain(
      "nvme6n1 is mounted at /data, none of the node's own filesystems"
    )
    const lvm = await run(hostWith(VAR_ON_LVM, { "dm-0": "253:0" }), [remountedRo("dm-0")])
    expect(lvm).toMatchObject({ status: "False", events: [] })
  })

  it("config that promotes an ext4 error to a Condition does not make a volume's a node condition", async () => {
    const cfg = config("monitors: { storage: { reasons: { Ext4FilesystemError: { severity: Condition } } } }")
    const line = (dev: string) =>
      `EXT4-fs error (device ${dev}): ext4_find_entry:1455: inode #2: comm ls: reading directory lblock 0`
    expect((await run(hostWith(AL2_MOUNT_MODE), [line("nvme3n1")], cfg)).status).toBe("True")
    expect((await run(hostWith(AL2_MOUNT_MODE), [line("nvme0n1p1")], cfg)).status).toBe("False")
  })
})

describe("classifyMountPoint", () => {
  it("kubelet's volume paths, the instance store, and the rest", () => {
    expect(
      classifyMountPoint(`/var/lib/kubelet/pods/${POD_UID}/volumes/kubernetes.io~csi/${CSI_PV}/mount`)
    ).toEqual({
      kind: "volume",
      podUid: POD_UID,
      volume: CSI_PV
    })
    expect(classifyMountPoint(`/var/lib/kubelet/pods/${POD_UID}/volume-subpaths/data/app/0`)).toEqual({
      kind: "volume",
      podUid: POD_UID
    })
    expect(
      classifyMountPoint("/var/lib/kubelet/plugins/kubernetes.io/csi/ebs.csi.aws.com/not-a-hash/globalmount")
    ).toEqual({
      kind: "other"
    })
    expect(classifyMountPoint("/mnt/k8s-disks/0")).toEqual({ kind: "instance-store" })
    expect(classifyMountPoint("/mnt/k8s-disks-old/0")).toEqual({ kind: "other" })
    expect(classifyMountPoint("/var/lib/kubelet")).toEqual({ kind: "other" })
  })
})
