/**
 * Proxies in front of the real API server for faults the server cannot be made to produce on demand. Every
 * answer that is not an injected fault comes from the real API server.
 *
 * - `startFaultProxy`: terminates TLS (a throwaway self-signed certificate) and forwards each request with the
 *   real credentials, unless `fault(req)` answers it instead. An expired continue token cannot be provoked
 *   on the test cluster: compacting etcd past the token's revision does not expire it, because the 1.37 API
 *   server serves continue pages from its watch-cache snapshots (checked by hand on the development cluster).
 * - `startTcpRelay`: a plain TCP relay on a given port (TLS passes through untouched), for "the API server
 *   becomes reachable later".
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer as createHttpsServer, request as httpsRequest } from "node:https"
import { connect, createServer as createTcpServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { KubeAccess } from "@nodemend/kube-access"

export interface FaultProxy {
  /** Credentials that reach the API server through the proxy (it trusts the proxy's certificate). */
  readonly access: KubeAccess
  /** Request paths (with query) in the order the proxy received them. */
  readonly requests: string[]
  readonly close: () => Promise<void>
}

export type Fault = { readonly status: number; readonly body: unknown } | undefined

/** A throwaway key and certificate for 127.0.0.1 (openssl), for a loopback TLS proxy named `name`. */
export const selfSignedCert = (name: string): { key: Buffer; cert: Buffer } => {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`))
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "key.pem",
        "-out",
        "cert.pem",
        "-subj",
        `/CN=${name}`,
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-days",
        "1"
      ],
      { cwd: dir, stdio: ["ignore", "ignore", "pipe"] }
    )
    return { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export const startFaultProxy = async (
  upstream: KubeAccess,
  fault: (req: IncomingMessage) => Fault
): Promise<FaultProxy> => {
  const { key, cert } = selfSignedCert("nodemend-fault-proxy")
  const target = new URL(upstream.server)
  const requests: string[] = []
  const forward = async (req: IncomingMessage, res: ServerResponse) => {
    const token = await upstream.token()
    const up = httpsRequest(
      {
        host: target.hostname,
        port: target.port === "" ? 443 : Number(target.port),
        method: req.method,
        path: req.url,
        headers: {
          ...req.headers,
          host: target.host,
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` })
        },
        ...(upstream.ca === undefined ? {} : { ca: upstream.ca }),
        ...(upstream.cert === undefined ? {} : { cert: upstream.cert }),
        ...(upstream.key === undefined ? {} : { key: upstream.key }),
        rejectUnauthorized: !upstream.insecure
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      }
    )
    up.on("error", (e) => {
      res.writeHead(502, { "content-type": "text/plain" })
      res.end(String(e))
    })
    req.pipe(up)
  }
  const server = createHttpsServer({ key, cert }, (req, res) => {
    requests.push(req.url ?? "")
    const f = fault(req)
    if (f === undefined) {
      void forward(req, res)
      return
    }
    req.resume()
    res.writeHead(f.status, { "content-type": "application/json" })
    res.end(JSON.stringify(f.body))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    access: {
      server: `https://127.0.0.1:${port}`,
      ca: cert,
      cert: undefined,
      key: undefined,
      insecure: false,
      serverName: undefined,
      token: async () => undefined
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Relays TCP from 127.0.0.1:`port` to the API server's address; TLS passes through untouched. */
export const startTcpRelay = async (port: number, upstreamServer: string): Promise<() => Promise<void>> => {
  const target = new URL(upstreamServer)
  const sockets = new Set<Socket>()
  const server = createTcpServer((client) => {
    const up = connect(Number(target.port === "" ? 443 : target.port), target.hostname)
    for (const s of [client, up]) {
      sockets.add(s)
      s.on("close", () => sockets.delete(s))
      s.on("error", () => {
        client.destroy()
        up.destroy()
      })
    }
    client.pipe(up).pipe(client)
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", resolve)
  })
  return () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy()
      server.close(() => resolve())
    })
}
