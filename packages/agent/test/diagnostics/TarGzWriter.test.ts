import { execFileSync } from "node:child_process"
import { createWriteStream } from "node:fs"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { gunzipSync } from "node:zlib"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { paxRecord, splitUstarPath, TarGzWriter, tarHeader } from "../../src/diagnostics/TarGzWriter.ts"

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "targz-"))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Minimal tar reader for the test: name -> content. */
const readTar = (tar: Buffer): Map<string, Buffer> => {
  const out = new Map<string, Buffer>()
  let off = 0
  while (off + 512 <= tar.length) {
    const h = tar.subarray(off, off + 512)
    if (h.every((b) => b === 0)) break
    const str = (a: number, n: number) =>
      h
        .subarray(a, a + n)
        .toString("utf8")
        .replace(/\0.*$/s, "")
    const name = str(0, 100)
    const prefix = str(345, 155)
    const size = Number.parseInt(str(124, 12), 8)
    const full = prefix ? `${prefix}/${name}` : name
    out.set(full, tar.subarray(off + 512, off + 512 + size))
    off += 512 + Math.ceil(size / 512) * 512
  }
  return out
}

describe("TarGzWriter", () => {
  it("writes a tar.gz that system tar and a reader both understand", async () => {
    const src = join(dir, "src.txt")
    await writeFile(src, "from a file\n")
    const bundle = join(dir, "b.tar.gz")
    const w = new TarGzWriter(createWriteStream(bundle))
    await w.addDirectory("node-1")
    await w.addBuffer("node-1/hello.txt", "hello\n")
    await w.addFile("node-1/kernel/dmesg.txt", src)
    const long = `node-1/${"d".repeat(80)}/${"f".repeat(60)}.txt`
    await w.addStream(long, 5, Readable.from([Buffer.from("12"), Buffer.from("3456789")]))
    await w.addStream("node-1/short.txt", 4, Readable.from([Buffer.from("ab")]))
    await w.finish()

    const entries = readTar(gunzipSync(await readFile(bundle)))
    expect(entries.get("node-1/hello.txt")?.toString()).toBe("hello\n")
    expect(entries.get("node-1/kernel/dmesg.txt")?.toString()).toBe("from a file\n")
    expect(entries.get(long)?.toString()).toBe("12345")
    expect(entries.get("node-1/short.txt")).toEqual(Buffer.from([0x61, 0x62, 0, 0]))

    const listing = execFileSync("tar", ["-tzf", bundle], { encoding: "utf8" }).split("\n")
    expect(listing).toContain(long)
    const out = join(dir, "x")
    execFileSync("mkdir", ["-p", out])
    execFileSync("tar", ["-xzf", bundle, "-C", out])
    expect(await readFile(join(out, "node-1/kernel/dmesg.txt"), "utf8")).toBe("from a file\n")
  })

  it("computes a valid checksum and splits long paths", () => {
    const h = tarHeader({ path: "a.txt", size: 10, mtimeMs: 0 })
    const stored = Number.parseInt(h.subarray(148, 154).toString("ascii"), 8)
    const copy = Buffer.from(h)
    copy.fill(0x20, 148, 156)
    expect(stored).toBe(copy.reduce((a, b) => a + b, 0))
    expect(splitUstarPath(`${"p".repeat(120)}/name`)).toEqual({ prefix: "p".repeat(120), name: "name" })
    expect(() => splitUstarPath("x".repeat(300))).toThrow(/too long/)
  })

  it("paths ustar cannot hold get a PAX path record: GNU tar lists and extracts them exactly (ADR 0013)", async () => {
    const node = "n".repeat(200) // a node name may be 253 bytes; over 155 no ustar prefix holds it
    const paths = [
      `node-1/${"f".repeat(97)}.log`, // a 101-byte file name
      `node-1/${"d".repeat(150)}/${"e".repeat(80)}/${"f".repeat(60)}.log`, // 300 bytes
      `node-1/${"é".repeat(60)}`, // 60 characters, 120 bytes
      `${node}/kernel/dmesg.txt`,
      "node-1/journal/ünïcödé-日本語.log" // fits ustar: no PAX
    ]
    const bundle = join(dir, "long.tar.gz")
    const w = new TarGzWriter(createWriteStream(bundle))
    await w.addDirectory(`${node}/kernel`, 0)
    for (const [i, p] of paths.entries()) await w.addBuffer(p, `content ${i}\n`, 0)
    await w.finish()
    const listing = execFileSync("tar", ["-tzf", bundle], { encoding: "utf8" }).trim().split("\n")
    expect(listing).toEqual([`${node}/kernel/`, ...paths])
    const out = join(dir, "x")
    execFileSync("mkdir", ["-p", out])
    execFileSync("tar", ["-xzf", bundle, "-C", out])
    for (const [i, p] of paths.entries()) expect(await readFile(join(out, p), "utf8")).toBe(`content ${i}\n`)
    // A ustar path is still one plain header block.
    expect(tarHeader({ path: paths[4]!, size: 1, mtimeMs: 0 }).length).toBe(512)
  })

  it("a PAX record's length counts itself, across a change in its number of digits", () => {
    for (let n = 80; n < 110; n++) {
      const r = paxRecord("path", "p".repeat(n))
      expect(Number.parseInt(r, 10)).toBe(Buffer.byteLength(r))
    }
    expect(paxRecord("path", "é")).toBe("11 path=é\n") // é is two bytes
  })

  it("reports a failing sink from finish()", async () => {
    const w = new TarGzWriter(createWriteStream(join(dir, "missing-dir", "b.tar.gz")))
    await expect(
      (async () => {
        await w.addBuffer("a", "b")
        await w.finish()
      })()
    ).rejects.toThrow()
  })
})
