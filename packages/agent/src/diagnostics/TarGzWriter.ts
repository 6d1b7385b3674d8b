/**
 * A streaming tar.gz writer (POSIX ustar, with a PAX `path` record for longer paths, over node:zlib's
 * createGzip). Entries are streamed one after the other, so memory stays at one chunk whatever the bundle size: the caller gives each entry's size up front
 * (files are spooled to disk first) and the writer pads or truncates the data to exactly that size.
 */
import { createReadStream } from "node:fs"
import { stat } from "node:fs/promises"
import type { Readable, Writable } from "node:stream"
import { pipeline } from "node:stream/promises"
import type { Gzip } from "node:zlib"

const BLOCK = 512

export class TarPathTooLong extends Error {
  readonly path: string
  constructor(path: string) {
    super(`tar entry name too long for ustar: ${path}`)
    this.path = path
  }
}

const writeString = (buf: Buffer, offset: number, length: number, value: string) => {
  buf.write(value.slice(0, length), offset, length, "utf8")
}

const writeOctal = (buf: Buffer, offset: number, length: number, value: number) => {
  // length-1 octal digits, NUL-terminated.
  const s = Math.max(0, Math.floor(value))
    .toString(8)
    .padStart(length - 1, "0")
  buf.write(`${s}\0`, offset, length, "ascii")
}

/** Splits a path into ustar name (<=100 bytes) and prefix (<=155 bytes) at a slash; tarHeader falls back to PAX. */
export const splitUstarPath = (path: string): { name: string; prefix: string } => {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: "" }
  for (let i = path.lastIndexOf("/"); i > 0; i = path.lastIndexOf("/", i - 1)) {
    const prefix = path.slice(0, i)
    const name = path.slice(i + 1)
    if (Buffer.byteLength(name) <= 100 && Buffer.byteLength(prefix) <= 155) return { name, prefix }
  }
  throw new TarPathTooLong(path)
}

export interface TarHeader {
  readonly path: string
  readonly size: number
  readonly mode?: number
  readonly mtimeMs?: number
  readonly type?: "file" | "directory"
}

/** The longest prefix of `s` that fits `bytes` bytes of UTF-8 (never half a character). */
const truncateUtf8 = (s: string, bytes: number): string => {
  const chars = Array.from(s)
  while (Buffer.byteLength(chars.join("")) > bytes) chars.pop()
  return chars.join("")
}

interface Block {
  readonly name: string
  readonly prefix: string
  readonly size: number
  readonly mode: number
  readonly mtimeMs: number
  /** "0" file, "5" directory, "x" PAX extended header for the next entry. */
  readonly typeflag: "0" | "5" | "x"
}

const block = (b: Block): Buffer => {
  const buf = Buffer.alloc(BLOCK, 0)
  writeString(buf, 0, 100, b.name)
  writeOctal(buf, 100, 8, b.mode)
  writeOctal(buf, 108, 8, 0) // uid
  writeOctal(buf, 116, 8, 0) // gid
  // 11 octal digits hold sizes below 8 GiB; a larger one fills all 12 bytes without a NUL, which GNU tar and
  // Python's tarfile read (checked: ADR 0013); the bundle's entries are far smaller.
  writeOctal(buf, 124, 12, b.size)
  writeOctal(buf, 136, 12, Math.floor(b.mtimeMs / 1000))
  buf.fill(0x20, 148, 156) // checksum field counts as spaces while summing
  buf.write(b.typeflag, 156, 1, "ascii")
  writeString(buf, 257, 6, "ustar\0")
  writeString(buf, 263, 2, "00")
  writeString(buf, 265, 32, "root")
  writeString(buf, 297, 32, "root")
  writeString(buf, 345, 155, b.prefix)
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += buf[i]!
  buf.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "ascii")
  return buf
}

/** One PAX record, `<length> <key>=<value>\n`, whose length counts the whole record, its own digits included. */
export const paxRecord = (key: string, value: string): string => {
  const rest = ` ${key}=${value}\n`
  const n = Buffer.byteLength(rest)
  let length = n + String(n).length
  if (String(length).length > String(n).length) length += 1
  return `${length}${rest}`
}

/**
 * The header block(s) of one entry. A path ustar cannot hold (over 100 bytes with no split into a 155-byte
 * prefix and a 100-byte name: a long file name, a node name over 155 bytes) gets a POSIX PAX extended header
 * (typeflag x, `path=` record) first, as GNU tar and tar-stream write it; the ustar header then carries the
 * name cut to 100 bytes for readers without PAX. Pure.
 */
export const tarHeader = (h: TarHeader): Buffer => {
  const path = h.type === "directory" && !h.path.endsWith("/") ? `${h.path}/` : h.path
  const mode = h.mode ?? (h.type === "directory" ? 0o755 : 0o644)
  // Raw default: a pure header builder called from promise code; the bundle passes each file's mtime.
  const mtimeMs = h.mtimeMs ?? Date.now()
  const typeflag = h.type === "directory" ? "5" : "0"
  const size = h.type === "directory" ? 0 : h.size
  let split: { name: string; prefix: string }
  try {
    split = splitUstarPath(path)
  } catch (e) {
    if (!(e instanceof TarPathTooLong)) throw e
    const record = Buffer.from(paxRecord("path", path), "utf8")
    const base = path.slice(path.lastIndexOf("/", path.length - 2) + 1)
    return Buffer.concat([
      block({
        name: truncateUtf8(`PaxHeaders/${base}`, 100),
        prefix: "",
        size: record.length,
        mode: 0o644,
        mtimeMs,
        typeflag: "x"
      }),
      record,
      padding(record.length),
      block({ name: truncateUtf8(base, 100), prefix: "", size, mode, mtimeMs, typeflag })
    ])
  }
  return block({ ...split, size, mode, mtimeMs, typeflag })
}

const padding = (size: number): Buffer => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK, 0)

const writeChunk = (out: Writable, chunk: Buffer): Promise<void> =>
  new Promise((resolve, reject) => {
    const ok = out.write(chunk, (err) => {
      if (err) reject(err)
    })
    if (ok) resolve()
    else {
      const onDrain = () => {
        out.off("error", onError)
        resolve()
      }
      const onError = (e: Error) => {
        out.off("drain", onDrain)
        reject(e)
      }
      out.once("drain", onDrain)
      out.once("error", onError)
    }
  })

/**
 * A tar.gz being written to `sink`. Call `addFile`/`addBuffer`/`addStream` one at a time (each awaits),
 * then `finish()`, which resolves once the sink has received everything.
 */
export class TarGzWriter {
  private readonly gzip: Gzip
  private readonly done: Promise<void>
  private finished = false

  constructor(sink: Writable, options: { level?: number } = {}) {
    // node:zlib is loaded by the first bundle, not by every agent at start (the idle footprint).
    this.gzip = process.getBuiltinModule("node:zlib").createGzip({ level: options.level ?? 6 })
    this.done = pipeline(this.gzip, sink)
    // Surface a sink failure from whichever call is in progress; `finish` rethrows it.
    this.done.catch(() => undefined)
  }

  async addDirectory(path: string, mtimeMs?: number): Promise<void> {
    await writeChunk(this.gzip, tarHeader({ path, size: 0, type: "directory", mtimeMs }))
  }

  async addBuffer(path: string, data: Buffer | string, mtimeMs?: number): Promise<void> {
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data
    await writeChunk(this.gzip, tarHeader({ path, size: buf.length, mtimeMs }))
    if (buf.length > 0) await writeChunk(this.gzip, buf)
    await writeChunk(this.gzip, padding(buf.length))
  }

  /** Streams exactly `size` bytes from `source` (padding with NULs if it ends early, dropping any excess). */
  async addStream(path: string, size: number, source: Readable, mtimeMs?: number): Promise<void> {
    await writeChunk(this.gzip, tarHeader({ path, size, mtimeMs }))
    let written = 0
    for await (const chunk of source as AsyncIterable<Buffer>) {
      if (written >= size) continue
      const part = written + chunk.length > size ? chunk.subarray(0, size - written) : chunk
      await writeChunk(this.gzip, part)
      written += part.length
    }
    if (written < size) await writeChunk(this.gzip, Buffer.alloc(size - written, 0))
    await writeChunk(this.gzip, padding(size))
  }

  async addFile(path: string, filePath: string): Promise<void> {
    const st = await stat(filePath)
    await this.addStream(path, st.size, createReadStream(filePath), st.mtimeMs)
  }

  async finish(): Promise<void> {
    if (!this.finished) {
      this.finished = true
      await writeChunk(this.gzip, Buffer.alloc(BLOCK * 2, 0))
      this.gzip.end()
    }
    await this.done
  }
}
