// A downloaded bundle is kept as the node's only when it is the one the node's agent reported; anything else
// (another bundle uploaded under the node's key, a truncated one, one from an agent that reported nothing) is
// an error naming the node and both digests, and lands beside it as `.untrusted`.
import { createHash, randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { BundleDigest } from "@nodemend/kube-access/NodeDiagnostic"
import { Schema } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { matchesReport, UntrustedBundle } from "../src/bundleVerification.ts"
import { downloadUrl } from "../src/download.ts"

const digestOf = (b: Buffer) => ({ sha256: createHash("sha256").update(b).digest("hex"), size: b.length })
const real = randomBytes(40_000)
const forged = randomBytes(40_000)

describe("matchesReport", () => {
  it("matches only the same SHA-256 and size", () => {
    const d = digestOf(real)
    expect(matchesReport(d, { ...d })).toBe(true)
    expect(matchesReport(d, digestOf(forged))).toBe(false)
    expect(matchesReport(d, { ...d, size: d.size + 1 })).toBe(false)
    expect(matchesReport(undefined, d)).toBe(false)
  })
})

describe("BundleDigest (status schema)", () => {
  it("accepts lower-case hex SHA-256 and a size; refuses anything else", () => {
    const decode = Schema.decodeUnknownOption(BundleDigest)
    expect(decode(digestOf(real))._tag).toBe("Some")
    expect(decode({ sha256: digestOf(real).sha256.toUpperCase(), size: 1 })._tag).toBe("None")
    expect(decode({ sha256: "abc", size: 1 })._tag).toBe("None")
    expect(decode({ sha256: digestOf(real).sha256, size: -1 })._tag).toBe("None")
  })
})

describe("downloadUrl verifies the bundle", () => {
  let server: Server
  let base = ""
  let dir = ""
  let served = real
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { "content-length": String(served.length) }).end(served)
    })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))
  beforeEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
    dir = await mkdtemp(join(tmpdir(), "nodemend-verify-"))
  })

  it("keeps the bundle the agent reported", async () => {
    served = real
    const file = join(dir, "n1-logs.tar.gz")
    const got = await downloadUrl(`${base}/b/n1.tgz`, file, 5_000, { node: "n1", digest: digestOf(real) })
    expect(got).toEqual(digestOf(real))
    expect((await readFile(file)).equals(real)).toBe(true)
    expect(existsSync(`${file}.untrusted`)).toBe(false)
  })

  it("refuses another bundle under the node's key: error naming node and digests, kept as .untrusted", async () => {
    served = forged
    const file = join(dir, "n1-logs.tar.gz")
    await writeFile(file, "an earlier run's bundle")
    const e = await downloadUrl(`${base}/b/n1.tgz`, file, 5_000, { node: "n1", digest: digestOf(real) }).then(
      () => undefined,
      (x: unknown) => x
    )
    expect(e).toBeInstanceOf(UntrustedBundle)
    const msg = (e as Error).message
    expect(msg).toMatch(/^n1: /)
    expect(msg).toContain(`expected sha256 ${digestOf(real).sha256}`)
    expect(msg).toContain(`got sha256 ${digestOf(forged).sha256}`)
    expect(existsSync(file)).toBe(false)
    expect((await readFile(`${file}.untrusted`)).equals(forged)).toBe(true)
    expect(existsSync(`${file}.partial`)).toBe(false)
  })

  it("refuses a bundle when the agent reported completion without a digest", async () => {
    served = real
    const file = join(dir, "n2-logs.tar.gz")
    const e = await downloadUrl(`${base}/b/n2.tgz`, file, 5_000, { node: "n2", digest: undefined }).then(
      () => undefined,
      (x: unknown) => x
    )
    expect(e).toBeInstanceOf(UntrustedBundle)
    expect((e as Error).message).toContain("reported no digest")
    expect(existsSync(file)).toBe(false)
    expect(existsSync(`${file}.untrusted`)).toBe(true)
  })
})
