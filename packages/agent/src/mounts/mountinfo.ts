/**
 * The kernel's /proc/<pid>/mountinfo (Documentation/filesystems/proc.rst, "/proc/<pid>/mountinfo - Information
 * about mounts"), one line per mount:
 *
 *   36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
 *   (1)(2)(3)   (4)   (5)      (6)      (7)   (8) (9)   (10)         (11)
 *
 * mount ID, parent ID, major:minor, root, mount point, mount options, zero or more optional fields
 * (`tag[:value]`), the separator `-`, filesystem type, mount source, super options. The kernel escapes space,
 * tab, newline and backslash in the root, the mount point, the type and the source as `\ooo` octal (`\040`).
 * Fields are split on single spaces so that an empty field (a mount source of "") stays a field. Pure.
 */

export interface Mount {
  readonly mountId: number
  readonly parentId: number
  readonly major: number
  readonly minor: number
  /** The directory of the filesystem that forms this mount's root (`/kubelet` for a bind of a subdirectory). */
  readonly root: string
  readonly mountPoint: string
  readonly mountOptions: string
  readonly optionalFields: readonly string[]
  readonly fsType: string
  readonly source: string
  readonly superOptions: string
}

/** A line that is not a mountinfo record: its 1-based number, its text, and what is wrong with it. */
export interface MountinfoLineError {
  readonly line: number
  readonly text: string
  readonly message: string
}

/** Every non-blank line is either in `mounts` or in `errors`: nothing is dropped. */
export interface Mountinfo {
  readonly mounts: readonly Mount[]
  readonly errors: readonly MountinfoLineError[]
}

/** Undoes the kernel's `\ooo` escapes (mangle() in fs/proc_namespace.c); other backslashes stay as they are. */
export const unescapeMountField = (s: string): string =>
  s.includes("\\")
    ? s.replace(/\\([0-3][0-7]{2})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)))
    : s

const DEC = /^\d+$/
const DEV = /^(\d+):(\d+)$/

/** One line, or a message saying why it is not a mountinfo record. */
export const parseMountinfoLine = (line: string): Mount | string => {
  const fields = line.split(" ")
  const sep = fields.indexOf("-", 6)
  if (fields.length < 10) return `expected at least 10 space-separated fields, found ${fields.length}`
  if (sep < 0) return 'no "-" separator after the mount options (field 8)'
  const after = fields.length - sep - 1
  if (after !== 3)
    return `expected filesystem type, mount source and super options after "-", found ${after} fields`
  const [id, parent, dev, root, mountPoint, mountOptions] = fields as [
    string,
    string,
    string,
    string,
    string,
    string
  ]
  if (!DEC.test(id)) return `mount ID is not a number: ${JSON.stringify(id)}`
  if (!DEC.test(parent)) return `parent ID is not a number: ${JSON.stringify(parent)}`
  const mm = DEV.exec(dev)
  if (mm === null) return `major:minor is not two numbers: ${JSON.stringify(dev)}`
  if (!root.startsWith("/")) return `root is not an absolute path: ${JSON.stringify(root)}`
  if (!mountPoint.startsWith("/")) return `mount point is not an absolute path: ${JSON.stringify(mountPoint)}`
  return {
    mountId: Number(id),
    parentId: Number(parent),
    major: Number(mm[1]),
    minor: Number(mm[2]),
    root: unescapeMountField(root),
    mountPoint: unescapeMountField(mountPoint),
    mountOptions,
    optionalFields: fields.slice(6, sep),
    fsType: unescapeMountField(fields[sep + 1] as string),
    source: unescapeMountField(fields[sep + 2] as string),
    superOptions: fields[sep + 3] as string
  }
}

export const parseMountinfo = (text: string): Mountinfo => {
  const mounts: Mount[] = []
  const errors: MountinfoLineError[] = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    if (line.trim() === "") continue
    const r = parseMountinfoLine(line)
    if (typeof r === "string") errors.push({ line: i + 1, text: line, message: r })
    else mounts.push(r)
  }
  return { mounts, errors }
}
