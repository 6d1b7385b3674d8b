import { PassThrough } from "node:stream"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type ChunkRead, makeCoalescer, makeLineSource } from "../../src/sources/index.ts"

/** A pulled byte source over `bytes`, cut into reads of the given sizes (then of the buffer's size). */
const reader = (bytes: Buffer, cuts: readonly number[] = []): { read: ChunkRead; reads: number[] } => {
  let at = 0
  let i = 0
  const reads: number[] = []
  const read: ChunkRead = async (buffer) => {
    const want = Math.min(buffer.length, i < cuts.length ? Math.max(1, cuts[i++]!) : buffer.length)
    const n = bytes.copy(buffer, 0, at, Math.min(bytes.length, at + want))
    at += n
    if (n > 0) reads.push(n)
    return n
  }
  return { read, reads }
}

const deferred = () => {
  let resolve!: () => void
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

describe("coalescer", () => {
  it("N pokes during a run make exactly one more run", async () => {
    let runs = 0
    let gate = deferred()
    const c = makeCoalescer(
      async () => {
        runs++
        await gate.promise
      },
      () => undefined
    )
    const first = c.poke()
    expect(runs).toBe(1)
    const during = Array.from({ length: 10 }, () => c.poke())
    gate.resolve()
    gate = deferred()
    await new Promise((r) => setTimeout(r, 0))
    expect(runs).toBe(2)
    gate.resolve()
    await Promise.all([first, ...during])
    expect(runs).toBe(2)
    // Idle again: a poke runs at once.
    await c.poke()
    expect(runs).toBe(3)
  })

  it("reports a failed run, keeps going, and runs nothing after stop", async () => {
    const errors: unknown[] = []
    let runs = 0
    const c = makeCoalescer(
      async () => {
        runs++
        throw new Error("boom")
      },
      (e) => errors.push(e)
    )
    await c.poke()
    await c.poke()
    expect(runs).toBe(2)
    expect(errors).toHaveLength(2)
    await c.stop()
    await c.poke()
    expect(runs).toBe(2)
  })
})

describe("line source", () => {
  it("counts lines, cut lines and bytes in one place, and skips what `accept` rejects", async () => {
    const got: string[] = []
    let cut = 0
    const s = makeLineSource({
      onLine: (l) => got.push(l),
      onTruncatedLine: () => cut++,
      accept: (l) => !l.startsWith(" "),
      maxLineBytes: 8,
      chunkBytes: 4
    })
    const bytes = Buffer.from("ab\n DICT=1\n0123456789\ncd\n")
    await s.drain(reader(bytes).read)
    expect(got).toEqual(["ab", "01234567", "cd"])
    expect(cut).toBe(1)
    expect(s.counts).toEqual({ linesRead: 3, linesTruncated: 1, bytesRead: bytes.length })
  })

  it("backpressure: the next chunk is read only once the consumer has finished the previous one", async () => {
    const events: string[] = []
    let gate = deferred()
    const s = makeLineSource({
      onLine: (l) => events.push(`line ${l}`),
      onTruncatedLine: () => undefined,
      afterChunk: () => {
        events.push("batch done?")
        return gate.promise
      },
      chunkBytes: 2
    })
    const src = reader(Buffer.from("a\nb\nc\n"))
    const read: ChunkRead = async (b) => {
      events.push("read")
      return src.read(b)
    }
    const drained = s.drain(read)
    await new Promise((r) => setTimeout(r, 5))
    // One read, its line delivered, then nothing until the consumer lets go.
    expect(events).toEqual(["read", "line a", "batch done?"])
    for (let i = 0; i < 3; i++) {
      const g = gate
      gate = deferred()
      g.resolve()
      await new Promise((r) => setTimeout(r, 5))
    }
    await drained
    expect(events).toEqual([
      "read",
      "line a",
      "batch done?",
      "read",
      "line b",
      "batch done?",
      "read",
      "line c",
      "batch done?",
      "read"
    ])
  })

  it("backpressure on a pushed stream: paused while the consumer is busy", async () => {
    const got: string[] = []
    let gate = deferred()
    const s = makeLineSource({
      onLine: (l) => got.push(l),
      onTruncatedLine: () => undefined,
      afterChunk: () => gate.promise
    })
    const stream = new PassThrough()
    s.attach(stream)
    stream.write("x\n")
    await new Promise((r) => setTimeout(r, 5))
    expect(got).toEqual(["x"])
    expect(stream.isPaused()).toBe(true)
    stream.write("y\nz")
    await new Promise((r) => setTimeout(r, 5))
    expect(got).toEqual(["x"])
    gate.resolve()
    gate = deferred()
    gate.resolve()
    stream.end()
    await new Promise((r) => setTimeout(r, 5))
    expect(got).toEqual(["x", "y", "z"])
    expect(s.counts.linesRead).toBe(3)
  })

  it("a pushed chunk larger than chunkBytes is taken a slice at a time, each slice's lines before the next", async () => {
    const got: string[] = []
    const slices: number[] = []
    let gate = deferred()
    const s = makeLineSource({
      onLine: (l) => got.push(l),
      onTruncatedLine: () => undefined,
      chunkBytes: 8,
      afterChunk: () => {
        slices.push(s.counts.bytesRead)
        return gate.promise
      }
    })
    const stream = new PassThrough()
    s.attach(stream)
    // One 19-byte chunk: slices of 8, 8 and 3 bytes; a line cut by a slice boundary arrives whole.
    stream.write("aaaa\nbbbbbb\ncccccc\n")
    await new Promise((r) => setTimeout(r, 5))
    expect(slices).toEqual([8])
    expect(got).toEqual(["aaaa"])
    expect(stream.isPaused()).toBe(true)
    gate.resolve()
    gate = deferred()
    await new Promise((r) => setTimeout(r, 5))
    expect(slices).toEqual([8, 16])
    expect(got).toEqual(["aaaa", "bbbbbb"])
    gate.resolve()
    gate = deferred()
    gate.resolve()
    await new Promise((r) => setTimeout(r, 5))
    expect(slices).toEqual([8, 16, 19])
    expect(got).toEqual(["aaaa", "bbbbbb", "cccccc"])
    expect(stream.isPaused()).toBe(false)
  })

  it("stop ends a drain after its current read", async () => {
    const got: string[] = []
    const s = makeLineSource({ onLine: (l) => got.push(l), onTruncatedLine: () => undefined, chunkBytes: 2 })
    const src = reader(Buffer.from("a\nb\nc\n"))
    await s.drain(async (b) => {
      const n = await src.read(b)
      s.stop()
      return n
    })
    expect(got).toEqual(["a"])
  })

  it("property: chunk boundaries anywhere (inside lines, inside UTF-8 sequences) yield the same lines", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: "grapheme", maxLength: 30 }), { maxLength: 20 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 30 }),
        fc.integer({ min: 1, max: 64 }),
        async (lines, cuts, chunkBytes) => {
          const clean = lines.map((l) => l.replace(/[\r\n]/g, ""))
          const bytes = Buffer.from(clean.map((l) => `${l}\n`).join(""), "utf8")
          const got: string[] = []
          const s = makeLineSource({
            onLine: (l) => got.push(l),
            onTruncatedLine: () => undefined,
            chunkBytes
          })
          const src = reader(bytes, cuts)
          await s.drain(src.read)
          expect(got).toEqual(clean)
          expect(s.counts.linesRead).toBe(clean.length)
          expect(s.counts.bytesRead).toBe(bytes.length)
          expect(Math.max(0, ...src.reads)).toBeLessThanOrEqual(chunkBytes)
        }
      )
    )
  })
})
