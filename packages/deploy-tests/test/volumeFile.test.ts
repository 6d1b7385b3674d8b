// The real-node tests read pods' tokens the way the kubelet laid them out; this builds that layout (links owned
// by the pod's user in a sticky, world-writable directory) and reads it where the kernel refuses root following
// such links (fs.protected_symlinks = 1, the default of every stock Debian or systemd host).
import {
  chmodSync,
  lchownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { readVolumeFile } from "./realnode/volumeFile.ts"

const POD_USER = 65532
const root = mkdtempSync(join(tmpdir(), "nodemend-volume-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** The kubelet's atomic writer: `token -> ..data/token`, `..data -> ..<timestamp>`, the data in `..<timestamp>/`. */
const kubeletVolume = (owner: number | undefined) => {
  const volume = mkdtempSync(join(root, "kube-api-access-"))
  const data = join(volume, "..2026_12_02_01_00_00.123456789")
  mkdirSync(data)
  writeFileSync(join(data, "token"), "the-token")
  symlinkSync("..2026_12_02_01_00_00.123456789", join(volume, "..data"))
  symlinkSync("..data/token", join(volume, "token"))
  if (owner !== undefined) {
    // Root's directory, the pod user's links: the pairing the kernel refuses to follow.
    chmodSync(volume, 0o1777)
    lchownSync(join(volume, "..data"), owner, owner)
    lchownSync(join(volume, "token"), owner, owner)
  }
  return volume
}

const protectedSymlinks = () => {
  try {
    return readFileSync("/proc/sys/fs/protected_symlinks", "utf8").trim() === "1"
  } catch {
    return false
  }
}

describe("readVolumeFile", () => {
  it("resolves the kubelet's two links inside the volume", () => {
    expect(readVolumeFile(kubeletVolume(undefined), "token")).toBe("the-token")
  })

  it.runIf(process.getuid?.() === 0 && protectedSymlinks())(
    "reads a pod user's links in a sticky world-writable volume where root may not follow them",
    () => {
      const volume = kubeletVolume(POD_USER)
      // What podToken did before: the kernel refuses it.
      expect(() => readFileSync(join(volume, "token"), "utf8")).toThrow(/EACCES/)
      expect(readVolumeFile(volume, "token")).toBe("the-token")
    }
  )

  it("refuses a link that leaves the volume", () => {
    const volume = kubeletVolume(undefined)
    symlinkSync("../../../etc/hostname", join(volume, "escape"))
    symlinkSync("/etc/hostname", join(volume, "absolute"))
    expect(() => readVolumeFile(volume, "escape")).toThrow(/outside its volume/)
    expect(() => readVolumeFile(volume, "absolute")).toThrow(/outside its volume/)
  })

  it("gives up on a loop", () => {
    const volume = kubeletVolume(undefined)
    symlinkSync("b", join(volume, "a"))
    symlinkSync("a", join(volume, "b"))
    expect(() => readVolumeFile(volume, "a")).toThrow(/too many symlinks/)
  })
})
