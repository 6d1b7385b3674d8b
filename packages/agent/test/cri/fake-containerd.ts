/**
 * A test double of containerd's CRI endpoint that speaks the real wire protocol: an HTTP/2 (h2c) server
 * from node:http2 on a unix socket, answering runtime.v1.RuntimeService/PodSandboxStatus with
 * length-prefixed protobuf messages and grpc-status trailers. Unknown sandboxes get NOT_FOUND as a
 * trailers-only response, as containerd answers them (`an error occurred when try to find sandbox`).
 */
import { mkdirSync, rmSync } from "node:fs"
import http2 from "node:http2"
import { dirname } from "node:path"
import {
  decodePodSandboxStatusRequest,
  encodePodSandboxStatusResponse,
  POD_SANDBOX_STATUS_METHOD,
  type PodSandboxStatus
} from "../../src/cri/pod-sandbox-status.ts"
import {
  encodeStatusResponse,
  LIST_POD_SANDBOX_METHOD,
  type RuntimeCondition,
  STATUS_METHOD
} from "../../src/cri/runtime-health.ts"

export interface FakeContainerd {
  readonly socket: string
  /** Sandbox statuses by id; edit freely between calls. */
  readonly sandboxes: Map<string, PodSandboxStatus>
  /** Sandbox ids asked for, in order. */
  readonly requests: string[]
  /** When set, every call waits this long before answering. */
  delayMs: number
  /** When set, a response body goes out in DATA frames of at most this many bytes, one per tick. */
  chunkBytes: number
  /** What Status reports (containerd's two conditions, both true, by default). */
  runtimeConditions: RuntimeCondition[]
  /** When set, Status and ListPodSandbox answer with this grpc-status (e.g. 14 UNAVAILABLE). */
  healthStatus: number
  /** Methods called, in order. */
  readonly methods: string[]
  /** HTTP/2 connections the server holds open now. */
  readonly openSessions: () => number
  close(): Promise<void>
}

const frame = (msg: Uint8Array): Buffer => {
  const out = Buffer.alloc(5 + msg.length)
  out.writeUInt32BE(msg.length, 1)
  out.set(msg, 5)
  return out
}

export const sandbox = (id: string, namespace: string, name: string, ip: string, extra: string[] = []) =>
  ({
    id,
    metadata: { name, uid: `uid-${name}`, namespace, attempt: 0 },
    state: 0,
    createdAt: 1_764_480_000_000_000_000n,
    network: { ip, additionalIps: extra }
  }) satisfies PodSandboxStatus

export const startFakeContainerd = async (socket: string): Promise<FakeContainerd> => {
  mkdirSync(dirname(socket), { recursive: true })
  rmSync(socket, { force: true })
  const sandboxes = new Map<string, PodSandboxStatus>()
  const requests: string[] = []
  const server = http2.createServer()
  const state = { delayMs: 0, chunkBytes: 0, healthStatus: 0 }
  const methods: string[] = []
  let runtimeConditions: RuntimeCondition[] = [
    { type: "RuntimeReady", status: true, reason: "", message: "" },
    { type: "NetworkReady", status: true, reason: "", message: "" }
  ]
  server.on("stream", (stream, headers) => {
    const chunks: Buffer[] = []
    stream.on("data", (b: Buffer) => chunks.push(b))
    stream.on("end", () => {
      const answer = () => {
        if (stream.destroyed) return
        const path = String(headers[":path"])
        methods.push(path)
        if (path === STATUS_METHOD || path === LIST_POD_SANDBOX_METHOD) {
          if (state.healthStatus !== 0) {
            stream.respond(
              {
                ":status": 200,
                "content-type": "application/grpc",
                "grpc-status": String(state.healthStatus),
                "grpc-message": "runtime down"
              },
              { endStream: true }
            )
            return
          }
          stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true })
          stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0", "grpc-message": "" }))
          // ListPodSandbox: an empty list (the probe only awaits it)
          stream.end(
            frame(path === STATUS_METHOD ? encodeStatusResponse(runtimeConditions) : new Uint8Array())
          )
          return
        }
        if (
          headers[":path"] !== POD_SANDBOX_STATUS_METHOD ||
          headers["content-type"] !== "application/grpc"
        ) {
          stream.respond(
            {
              ":status": 200,
              "content-type": "application/grpc",
              "grpc-status": "12",
              "grpc-message": "unknown method"
            },
            { endStream: true }
          )
          return
        }
        const request = Buffer.concat(chunks)
        const req = decodePodSandboxStatusRequest(request.subarray(5, 5 + request.readUInt32BE(1)))
        requests.push(req.podSandboxId)
        const status = sandboxes.get(req.podSandboxId)
        if (status === undefined) {
          stream.respond(
            {
              ":status": 200,
              "content-type": "application/grpc",
              "grpc-status": "5",
              "grpc-message": encodeURIComponent(`an error occurred when try to find sandbox: not found`)
            },
            { endStream: true }
          )
          return
        }
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, { waitForTrailers: true })
        stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0", "grpc-message": "" }))
        const body = frame(encodePodSandboxStatusResponse({ status }))
        if (state.chunkBytes <= 0) {
          stream.end(body)
          return
        }
        // one write per tick: each goes out as its own DATA frame (the 5-byte prefix split too)
        const writeFrom = (at: number) => {
          if (stream.destroyed) return
          if (at >= body.length) return void stream.end()
          stream.write(body.subarray(at, at + state.chunkBytes))
          setImmediate(() => writeFrom(at + state.chunkBytes))
        }
        writeFrom(0)
      }
      if (state.delayMs > 0) setTimeout(answer, state.delayMs)
      else answer()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(socket, () => resolve())
  })
  const sessions = new Set<http2.ServerHttp2Session>()
  server.on("session", (s) => {
    sessions.add(s)
    s.on("close", () => sessions.delete(s))
  })
  return {
    socket,
    sandboxes,
    requests,
    get delayMs() {
      return state.delayMs
    },
    set delayMs(v: number) {
      state.delayMs = v
    },
    get chunkBytes() {
      return state.chunkBytes
    },
    set chunkBytes(v: number) {
      state.chunkBytes = v
    },
    get runtimeConditions() {
      return runtimeConditions
    },
    set runtimeConditions(v: RuntimeCondition[]) {
      runtimeConditions = v
    },
    get healthStatus() {
      return state.healthStatus
    },
    set healthStatus(v: number) {
      state.healthStatus = v
    },
    methods,
    openSessions: () => sessions.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy()
        server.close(() => {
          rmSync(socket, { force: true })
          resolve()
        })
      })
  }
}
