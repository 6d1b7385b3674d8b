import { existsSync } from "node:fs"
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  deliverToNode,
  kubeletProxyBundlePath,
  NODE_BUNDLE_DIR,
  guardedLookup,
  pruneNodeBundles,
  UploadFailed,
  uploadBundle
} from "../../src/diagnostics/Delivery.ts"

let dir: string
let bundle: string
const servers: Server[] = []
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "delivery-"))
  bundle = join(dir, "b.tar.gz")
  await writeFile(bundle, Buffer.alloc(10_000, 7))
})
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r))
  await rm(dir, { recursive: true, force: true })
})

const serve = async (handler: Parameters<typeof createServer>[1]) => {
  const s = createServer(handler)
  servers.push(s)
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r))
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`
}

describe("uploadBundle", () => {
  it("PUTs the file with a Content-Length (no chunked encoding)", async () => {
    let seen: { method?: string; length?: string; chunked?: string; bytes: number } = { bytes: 0 }
    const base = await serve((req, res) => {
      let bytes = 0
      req.on("data", (c: Buffer) => {
        bytes += c.length
      })
      req.on("end", () => {
        seen = {
          method: req.method,
          length: req.headers["content-length"],
          chunked: req.headers["transfer-encoding"],
          bytes
        }
        res.end()
      })
    })
    const r = await uploadBundle(bundle, new URL(`${base}/k?X-Amz-Signature=s`), 5_000)
    expect(r).toEqual({ status: 200, bytes: 10_000 })
    expect(seen).toEqual({ method: "PUT", length: "10000", chunked: undefined, bytes: 10_000 })
  })

  it("does not follow a redirect to another host", async () => {
    let elsewhere = 0
    const other = await serve((_req, res) => {
      elsewhere++
      res.end()
    })
    const base = await serve((req, res) => {
      req.resume()
      req.on("end", () => res.writeHead(307, { location: `${other}/stolen` }).end())
    })
    await expect(uploadBundle(bundle, new URL(`${base}/k`), 5_000)).rejects.toThrow(/answered 307/)
    expect(elsewhere).toBe(0)
  })

  it("reports a refusal by its status code only: no body, no query", async () => {
    // Whatever an allowed host answers is not the agent's to publish in a status anyone can read.
    const base = await serve((req, res) => {
      req.resume()
      req.on("end", () =>
        res
          .writeHead(403, "Forbidden <script>planted-reason</script>")
          .end("<Error><Code>AccessDenied</Code><Message>planted-body</Message></Error>")
      )
    })
    const err = await uploadBundle(bundle, new URL(`${base}/k?X-Amz-Signature=secret`), 5_000).catch(
      (e: Error) => e
    )
    expect(err).toBeInstanceOf(UploadFailed)
    expect(String((err as Error).message)).toBe(`PUT ${base}/k answered 403 (Forbidden)`)
  })

  it("refuses a host name that resolves to a loopback address", async () => {
    let requests = 0
    const base = await serve((req, res) => {
      requests++
      req.resume()
      req.on("end", () => res.end())
    })
    const port = new URL(base).port
    await expect(uploadBundle(bundle, new URL(`http://localhost:${port}/k`), 5_000)).rejects.toThrow(
      /localhost resolves to .*a loopback, link-local or metadata address/
    )
    expect(requests).toBe(0)
  })

  it("checks every address a name resolves to", async () => {
    const lookup = (hostname: string) =>
      new Promise<unknown>((resolve) =>
        guardedLookup(hostname, { all: true }, (err, address) => resolve(err ?? address))
      )
    expect(String(await lookup("localhost"))).toMatch(/resolves to/)
  })

  it("gives up on a destination that never answers", async () => {
    const base = await serve(() => undefined)
    const t0 = Date.now()
    await expect(uploadBundle(bundle, new URL(`${base}/k`), 300)).rejects.toThrow()
    expect(Date.now() - t0).toBeLessThan(3_000)
  })
})

describe("node destination", () => {
  it("writes under <host-root>/var/log/nodemend and prunes bundles after their retention", async () => {
    const hostRoot = join(dir, "host")
    const target = await deliverToNode(bundle, hostRoot, "node-a")
    expect(target).toBe(join(hostRoot, NODE_BUNDLE_DIR, "node-a-logs.tar.gz"))
    const old = join(hostRoot, NODE_BUNDLE_DIR, "node-old-logs.tar.gz")
    await mkdir(join(hostRoot, NODE_BUNDLE_DIR), { recursive: true })
    await writeFile(old, "x")
    const now = Date.now()
    await utimes(old, new Date(now - 11 * 60_000), new Date(now - 11 * 60_000))
    await pruneNodeBundles(hostRoot, now)
    expect(existsSync(old)).toBe(false)
    expect(existsSync(target)).toBe(true)
    await pruneNodeBundles(hostRoot, now + 10 * 60_000 + 1)
    expect(existsSync(target)).toBe(false)
  })

  it("names the kubelet proxy path the plugin downloads from", () => {
    expect(kubeletProxyBundlePath("n1")).toBe("/api/v1/nodes/n1/proxy/logs/nodemend/n1-logs.tar.gz")
  })
})
