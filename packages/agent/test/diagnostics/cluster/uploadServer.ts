// A loopback HTTP server standing in for S3: accepts PUTs (stores the body), serves GETs of what was stored,
// and records every request so tests can assert that a refused destination got none.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface UploadServer {
  readonly base: string
  readonly requests: Array<{ method: string; path: string; bytes: number; headers: Record<string, unknown> }>
  readonly objects: Map<string, Buffer>
  /** Paths whose PUT answers 403 (a presigned URL that expired). */
  readonly denied: Set<string>
  /** GETs of a path wait for its promise (a test orders another upload before the download). */
  readonly holdGets: Map<string, Promise<void>>
  close(): Promise<void>
}

export const startUploadServer = async (): Promise<UploadServer> => {
  const requests: UploadServer["requests"] = []
  const objects = new Map<string, Buffer>()
  const denied = new Set<string>()
  const holdGets = new Map<string, Promise<void>>()
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0] ?? "/"
      const body = Buffer.concat(chunks)
      requests.push({ method: req.method ?? "", path, bytes: body.length, headers: req.headers })
      if (req.method === "PUT") {
        if (denied.has(path)) {
          res
            .writeHead(403)
            .end("<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>")
          return
        }
        objects.set(path, body)
        res.writeHead(200).end()
      } else if (req.method === "GET") {
        void (holdGets.get(path) ?? Promise.resolve()).then(() => {
          const o = objects.get(path)
          if (o === undefined) res.writeHead(404).end("NoSuchKey")
          else
            res
              .writeHead(200, { "content-type": "application/gzip", "content-length": String(o.length) })
              .end(o)
        })
      } else res.writeHead(404).end("NoSuchKey")
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const port = (server.address() as AddressInfo).port
  return {
    base: `http://127.0.0.1:${port}`,
    requests,
    objects,
    denied,
    holdGets,
    close: () => new Promise<void>((r) => server.close(() => r()))
  }
}
