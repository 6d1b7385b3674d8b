// biome-ignore-all lint/suspicious/noExplicitAny: the libraries' untyped results, in a measurement script
/** The agent's TarGzWriter API on tar-stream's pack + node:zlib (tar-stream writes PAX headers for long names). */
import { createReadStream } from "node:fs"
import { stat } from "node:fs/promises"
import type { Readable, Writable } from "node:stream"
import { pipeline } from "node:stream/promises"
import tarStream from "tar-stream"

export class TarGzWriter {
  private readonly pack = tarStream.pack()
  private readonly done: Promise<void>
  constructor(sink: Writable, options: { level?: number } = {}) {
    const gzip = process.getBuiltinModule("node:zlib").createGzip({ level: options.level ?? 6 })
    this.done = pipeline(this.pack, gzip, sink)
    this.done.catch(() => undefined)
  }
  private entry(header: object, body?: Buffer): Promise<void> {
    return new Promise((resolve, reject) =>
      this.pack.entry(header as any, body as any, (e: unknown) => (e ? reject(e) : resolve()))
    )
  }
  addDirectory(path: string, mtimeMs?: number): Promise<void> {
    return this.entry({
      name: path,
      type: "directory",
      mode: 0o755,
      mtime: new Date(mtimeMs ?? Date.now()),
      uname: "root",
      gname: "root"
    })
  }
  addBuffer(path: string, data: Buffer | string, mtimeMs?: number): Promise<void> {
    const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data
    return this.entry(
      {
        name: path,
        size: buf.length,
        mode: 0o644,
        mtime: new Date(mtimeMs ?? Date.now()),
        uname: "root",
        gname: "root"
      },
      buf
    )
  }
  async addStream(path: string, size: number, source: Readable, mtimeMs?: number): Promise<void> {
    const sink = this.pack.entry({
      name: path,
      size,
      mode: 0o644,
      mtime: new Date(mtimeMs ?? Date.now()),
      uname: "root",
      gname: "root"
    })
    const finished = new Promise<void>((resolve, reject) => {
      sink.on("finish", resolve)
      sink.on("error", reject)
    })
    let written = 0
    for await (const chunk of source as AsyncIterable<Buffer>) {
      if (written >= size) continue
      const part = written + chunk.length > size ? chunk.subarray(0, size - written) : chunk
      if (!sink.write(part)) await new Promise((r) => sink.once("drain", r))
      written += part.length
    }
    if (written < size) sink.write(Buffer.alloc(size - written, 0))
    sink.end()
    await finished
  }
  async addFile(path: string, filePath: string): Promise<void> {
    const st = await stat(filePath)
    await this.addStream(path, st.size, createReadStream(filePath), st.mtimeMs)
  }
  async finish(): Promise<void> {
    this.pack.finalize()
    await this.done
  }
}
