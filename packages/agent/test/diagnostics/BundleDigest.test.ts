import { createHash, randomBytes } from "node:crypto"
import { Readable, Writable } from "node:stream"
import { pipeline } from "node:stream/promises"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { DigestTap } from "../../src/diagnostics/BundleDigest.ts"

/** Streams `chunks` through a tap into a sink; returns what the sink got and the tap's digest. */
const through = async (chunks: ReadonlyArray<Buffer>) => {
  const tap = new DigestTap()
  const got: Buffer[] = []
  const sink = new Writable({
    write(chunk: Buffer, _e, cb) {
      got.push(chunk)
      cb()
    }
  })
  await pipeline(Readable.from(chunks), tap, sink)
  return { passed: Buffer.concat(got), digest: tap.digest() }
}

describe("DigestTap", () => {
  it("passes bytes through unchanged and reports their SHA-256 and size", async () => {
    const data = randomBytes(300_000)
    const { passed, digest } = await through([
      data.subarray(0, 1),
      data.subarray(1, 70_000),
      data.subarray(70_000)
    ])
    expect(passed.equals(data)).toBe(true)
    expect(digest).toEqual({ sha256: createHash("sha256").update(data).digest("hex"), size: data.length })
  })

  it("reports the empty digest for an empty stream", async () => {
    expect((await through([])).digest).toEqual({
      sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      size: 0
    })
  })

  it("gives the same digest however the bytes are chunked", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 2048 }), { maxLength: 20 }), async (parts) => {
        const chunks = parts.map((p) => Buffer.from(p))
        const whole = Buffer.concat(chunks)
        const { digest } = await through(chunks.filter((c) => c.length > 0))
        expect(digest).toEqual({
          sha256: createHash("sha256").update(whole).digest("hex"),
          size: whole.length
        })
      }),
      { numRuns: 50 }
    )
  })
})
