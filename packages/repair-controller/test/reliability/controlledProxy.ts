import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createServer as createHttpsServer, request as httpsRequest } from "node:https"
import type { Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { KubeAccess } from "@nodemend/kube-access"
import { stringify } from "yaml"
import { selfSignedCert } from "../integration/faultProxy.ts"

export interface LoggedRequest {
  readonly at: number
  readonly method: string
  readonly path: string
  status?: number
}

export interface ControlledProxy {
  /** A kubeconfig file that reaches the API server through this proxy. */
  readonly kubeconfig: string
  readonly log: LoggedRequest[]
  /** Milliseconds to hold a request before forwarding it (0: at once). */
  hold: (method: string, path: string) => number
  /** Every request is held this long first (a slow link). */
  delayMs: number
  /** Partitioned: requests get no answer and open connections are cut. */
  setPartitioned: (on: boolean) => void
  readonly close: () => Promise<void>
}

export const startControlledProxy = async (upstream: KubeAccess): Promise<ControlledProxy> => {
  const { key, cert } = selfSignedCert("nodemend-reliability-proxy")
  const target = new URL(upstream.server)
  const log: LoggedRequest[] = []
  const sockets = new Set<Socket>()
  let partitioned = false
  const forward = async (req: IncomingMessage, body: Buffer, res: ServerResponse, entry: LoggedRequest) => {
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
        entry.status = answer.statusCode
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      }
    )
    up.on("error", () => res.destroy())
    res.on("close", () => up.destroy())
    up.end(body)
  }
  const proxy: ControlledProxy = {
    kubeconfig: "",
    log,
    hold: () => 0,
    delayMs: 0,
    setPartitioned: (on) => {
      partitioned = on
      if (on) for (const s of sockets) s.destroy()
    },
    close: async () => undefined
  }
  const server = createHttpsServer({ key, cert }, (req, res) => {
    const entry: LoggedRequest = { at: Date.now(), method: req.method ?? "", path: req.url ?? "" }
    log.push(entry)
    // Partitioned: never answered (the client's own timeout decides), as a black-holed route would.
    if (partitioned) return
    const wait = proxy.delayMs + proxy.hold(entry.method, entry.path)
    // Read the body now so it is there when the request goes on.
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const go = () => {
        if (req.socket.destroyed || partitioned) return
        void forward(req, Buffer.concat(chunks), res, entry)
      }
      if (wait > 0) setTimeout(go, wait)
      else go()
    })
  })
  server.on("connection", (s: Socket) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
    if (partitioned) s.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  const dir = mkdtempSync(join(tmpdir(), "nodemend-rel-kubeconfig-"))
  const kubeconfig = join(dir, "kubeconfig")
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "proxy",
          cluster: {
            server: `https://127.0.0.1:${port}`,
            "certificate-authority-data": cert.toString("base64")
          }
        }
      ],
      users: [{ name: "proxy", user: {} }],
      contexts: [{ name: "proxy", context: { cluster: "proxy", user: "proxy" } }],
      "current-context": "proxy"
    })
  )
  return Object.assign(proxy, {
    kubeconfig,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
        rmSync(dir, { recursive: true, force: true })
      })
  })
}
