/**
 * The mountinfo parser (src/mounts/mountinfo.ts) against the kernel's format, Documentation/filesystems/proc.rst
 * "/proc/<pid>/mountinfo": fields 4, 5, 9 and 10 escaped as `\ooo` (space `\040`, tab `\011`, newline `\012`,
 * backslash `\134`), zero or more optional fields before the `-` separator. Every non-blank line is a mount or an
 * error: nothing is lost.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Mount, parseMountinfo, parseMountinfoLine } from "../../src/mounts/mountinfo.ts"
import { AL2023_RAID0, AL2_MOUNT_MODE } from "../fixtures/mountinfo.ts"

/** The kernel's mangle(): the four characters it escapes, as three octal digits. */
const mangle = (s: string): string =>
  s.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`)

const format = (m: Mount): string =>
  [
    m.mountId,
    m.parentId,
    `${m.major}:${m.minor}`,
    mangle(m.root),
    mangle(m.mountPoint),
    m.mountOptions,
    ...m.optionalFields,
    "-",
    mangle(m.fsType),
    mangle(m.source),
    m.superOptions
  ].join(" ")

const word = fc.stringMatching(/^[a-z0-9=,._-]{1,12}$/)
/** Path components with the characters the kernel escapes, and backslashes that look like escapes. */
const component = fc.stringMatching(/^(?:[a-z0-9._~-]|[ \t\n\\]|\\040){1,10}$/)
const path = fc.array(component, { maxLength: 5 }).map((cs) => `/${cs.join("/")}`)
const mount: fc.Arbitrary<Mount> = fc.record({
  mountId: fc.nat(),
  parentId: fc.nat(),
  major: fc.nat(4095),
  minor: fc.nat(1048575),
  root: path,
  mountPoint: path,
  mountOptions: word,
  optionalFields: fc.array(fc.stringMatching(/^(?:shared|master|propagate_from):\d{1,4}$|^unbindable$/), {
    maxLength: 3
  }),
  fsType: fc.oneof(word, component),
  source: fc.oneof(fc.constant(""), path, word),
  superOptions: word
})

describe("parseMountinfo", () => {
  it("reads back every mount the kernel could print: escapes undone, optional fields kept", () => {
    fc.assert(
      fc.property(fc.array(mount, { maxLength: 8 }), (mounts) => {
        const r = parseMountinfo(`${mounts.map(format).join("\n")}\n`)
        expect(r.errors).toEqual([])
        expect(r.mounts).toEqual(mounts)
      })
    )
  })

  it("loses nothing: each non-blank line is a mount or an error naming its line", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(mount.map(format), fc.string({ maxLength: 60 })), { maxLength: 12 }),
        (lines) => {
          const lone = lines.flatMap((l) => l.split("\n"))
          const r = parseMountinfo(lone.join("\n"))
          expect(r.mounts.length + r.errors.length).toBe(lone.filter((l) => l.trim() !== "").length)
          for (const e of r.errors) {
            expect(lone[e.line - 1]).toBe(e.text)
            expect(e.message).not.toBe("")
          }
        }
      )
    )
  })

  it("a bad line between good ones: the good ones parse, the bad one is a clear error", () => {
    const lines = AL2023_RAID0.trimEnd().split("\n")
    lines.splice(3, 0, "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 ext3 /dev/root rw,errors=continue")
    lines.splice(5, 0, "x 35 98:0 / /mnt rw - ext3 /dev/root rw")
    const r = parseMountinfo(lines.join("\n"))
    expect(r.mounts).toHaveLength(lines.length - 2)
    expect(r.errors).toEqual([
      {
        line: 4,
        text: lines[3],
        message: 'no "-" separator after the mount options (field 8)'
      },
      { line: 6, text: lines[5], message: 'mount ID is not a number: "x"' }
    ])
  })

  it("the proc.rst example line", () => {
    expect(
      parseMountinfoLine("36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue")
    ).toEqual({
      mountId: 36,
      parentId: 35,
      major: 98,
      minor: 0,
      root: "/mnt1",
      mountPoint: "/mnt2",
      mountOptions: "rw,noatime",
      optionalFields: ["master:1"],
      fsType: "ext3",
      source: "/dev/root",
      superOptions: "rw,errors=continue"
    })
  })

  it("an escaped space in a mount point; the fixtures parse whole", () => {
    const m = parseMountinfoLine("80 22 259:7 / /mnt/my\\040disk rw,relatime shared:40 - xfs /dev/nvme7n1 rw")
    expect(typeof m !== "string" && m.mountPoint).toBe("/mnt/my disk")
    for (const text of [AL2023_RAID0, AL2_MOUNT_MODE]) expect(parseMountinfo(text).errors).toEqual([])
  })
})
