/**
 * Unary gRPC calls over HTTP/2 on a unix socket (node:http2, no gRPC library), per the gRPC wire spec
 * (grpc/grpc doc/PROTOCOL-HTTP2.md): `POST /<service>/<method>`, `content-type: application/grpc`,
 * `te: trailers`, each message framed as a 1-byte compressed flag plus a big-endian u32 length; the call's
 * outcome is the `grpc-status` trailer (or header, in a trailers-only response), with `grpc-message`
 * percent-encoded. Every call is bounded by a timeout (also sent as `grpc-timeout`).
 */
import { Data, Effect } from "effect"
import type http2 from "node:http2"
import net from "node:net"

/** nghttp2's CANCEL error code (RFC 9113 section 7), so cancelling needs no import of node:http2. */
const NGHTTP2_CANCEL = 0x8

/** The socket is not there or nobody listens on it: the runtime is not reachable. */
export class GrpcUnavailable extends Data.TaggedError("GrpcUnavailable")<{
  readonly socket: string
  readonly detail: string
}> {
  override get message(): string {
    return `${this.socket}: ${this.detail}`
  }
}

export class GrpcTimeout extends Data.TaggedError("GrpcTimeout")<{
  readonly method: string
  readonly timeoutMs: number
}> {
  override get message(): string {
    return `${this.method}: no answer within ${this.timeoutMs} ms`
  }
}

/** The server answered with a non-OK grpc-status (codes: grpc/grpc doc/statuscodes.md). */
export class GrpcStatusError extends Data.TaggedError("GrpcStatusError")<{
  readonly method: string
  readonly code: number
  readonly detail: string
}> {
  override get message(): string {
    return `${this.method}: grpc-status ${this.code}: ${this.detail}`
  }
}

/** The answer is not a well-formed gRPC response (HTTP status, framing, compression, size). */
export class GrpcProtocolError extends Data.TaggedError("GrpcProtocolError")<{
  readonly method: string
  readonly detail: string
}> {
  override get message(): string {
    return `${this.method}: ${this.detail}`
  }
}

export type GrpcError = GrpcUnavailable | GrpcTimeout | GrpcStatusError | GrpcProtocolError

export const GRPC_OK = 0
export const GRPC_NOT_FOUND = 5

const MAX_RESPONSE_BYTES = 4 * 1024 * 1024

/** One length-prefixed, uncompressed gRPC message. */
export const grpcFrame = (message: Uint8Array): Buffer => {
  const out = Buffer.alloc(5 + message.length)
  out.writeUInt8(0, 0)
  out.writeUInt32BE(message.length, 1)
  out.set(message, 5)
  return out
}

/** The single message of a unary response body; a string says what is wrong with it. */
export const unframeUnary = (body: Buffer): Uint8Array | string => {
  if (body.length < 5) return `response body of ${body.length} bytes holds no gRPC message`
  if (body.readUInt8(0) !== 0) return "compressed response (no grpc-accept-encoding was offered)"
  const len = body.readUInt32BE(1)
  if (5 + len !== body.length) return `gRPC frame of ${len} bytes in a body of ${body.length - 5}`
  return body.subarray(5)
}

const decodeGrpcMessage = (raw: string | undefined): string => {
  if (raw === undefined) return ""
  try {
    return decodeURIComponent(raw)
  } catch {
    return raw
  }
}

const header = (h: http2.IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name]
  return Array.isArray(v) ? v[0] : v
}

export interface GrpcConnection {
  readonly unary: (method: string, request: Uint8Array) => Effect.Effect<Uint8Array, GrpcError>
}

const unavailableCodes = new Set(["ENOENT", "ECONNREFUSED", "EACCES", "ENOTSOCK", "ECONNRESET", "EPIPE"])

const unaryOn = (
  session: http2.ClientHttp2Session,
  socket: string,
  method: string,
  request: Uint8Array,
  timeoutMs: number,
  sessionFailure: () => Error | undefined
): Effect.Effect<Uint8Array, GrpcError> =>
  Effect.callback<Uint8Array, GrpcError>((resume) => {
    let settled = false
    const done = (e: Effect.Effect<Uint8Array, GrpcError>) => {
      if (settled) return
      settled = true
      resume(e)
    }
    let stream: http2.ClientHttp2Stream
    try {
      stream = session.request({
        ":method": "POST",
        ":path": method,
        "content-type": "application/grpc",
        te: "trailers",
        "grpc-timeout": `${Math.max(1, Math.ceil(timeoutMs))}m`
      })
    } catch (e) {
      done(Effect.fail(new GrpcUnavailable({ socket, detail: (e as Error).message })))
      return Effect.void
    }
    let status: string | undefined
    let grpcStatus: string | undefined
    let grpcMessage: string | undefined
    const chunks: Buffer[] = []
    let size = 0
    stream.on("response", (h) => {
      status = String(h[":status"])
      grpcStatus = header(h, "grpc-status")
      grpcMessage = header(h, "grpc-message")
    })
    stream.on("trailers", (t) => {
      grpcStatus = header(t, "grpc-status") ?? grpcStatus
      grpcMessage = header(t, "grpc-message") ?? grpcMessage
    })
    stream.on("data", (b: Buffer) => {
      size += b.length
      if (size > MAX_RESPONSE_BYTES) {
        stream.close(NGHTTP2_CANCEL)
        done(
          Effect.fail(new GrpcProtocolError({ method, detail: `response over ${MAX_RESPONSE_BYTES} bytes` }))
        )
        return
      }
      chunks.push(b)
    })
    const failed = (e: NodeJS.ErrnoException) => {
      // A stream cancelled because the connection failed (ERR_HTTP2_STREAM_CANCEL) carries the
      // connection's error as its cause.
      const cause =
        (sessionFailure() as NodeJS.ErrnoException | undefined) ??
        (e.cause instanceof Error ? (e.cause as NodeJS.ErrnoException) : e)
      done(
        Effect.fail(
          unavailableCodes.has(cause.code ?? "")
            ? new GrpcUnavailable({ socket, detail: cause.message })
            : new GrpcProtocolError({ method, detail: cause.message })
        )
      )
    }
    stream.on("error", failed)
    // A stream reset without an error event (RST_STREAM) settles here; after "end" this is a no-op.
    stream.on("close", () => {
      queueMicrotask(() => failed(new Error(`stream closed (code ${stream.rstCode})`)))
    })
    stream.on("end", () => {
      if (status !== "200")
        return done(Effect.fail(new GrpcProtocolError({ method, detail: `HTTP status ${status ?? "none"}` })))
      if (grpcStatus === undefined)
        return done(Effect.fail(new GrpcProtocolError({ method, detail: "no grpc-status" })))
      const code = Number(grpcStatus)
      if (code !== GRPC_OK)
        return done(
          Effect.fail(new GrpcStatusError({ method, code, detail: decodeGrpcMessage(grpcMessage) }))
        )
      const message = unframeUnary(Buffer.concat(chunks))
      done(
        typeof message === "string"
          ? Effect.fail(new GrpcProtocolError({ method, detail: message }))
          : Effect.succeed(message)
      )
    })
    stream.end(grpcFrame(request))
    return Effect.sync(() => {
      if (!stream.closed) stream.close(NGHTTP2_CANCEL)
    })
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () => Effect.fail(new GrpcTimeout({ method, timeoutMs }))
    })
  )

/**
 * Opens one HTTP/2 connection to the unix socket for the duration of `use` (so a batch of calls shares
 * it) and closes it afterwards. Connection failures surface as GrpcUnavailable from the first call.
 */
export const withGrpcConnection = <A, E>(
  socket: string,
  timeoutMs: number,
  use: (conn: GrpcConnection) => Effect.Effect<A, E>
): Effect.Effect<A, E | GrpcError> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      // Loaded on first use: an agent without a CRI socket to read never pays for node:http2.
      const session = process
        .getBuiltinModule("node:http2")
        .connect("http://localhost", { createConnection: () => net.connect(socket) })
      let failure: Error | undefined
      // Without a listener a connect error (ENOENT, ECONNREFUSED) would be thrown as an uncaught exception.
      session.on("error", (e) => {
        failure = e
      })
      return { session, failure: () => failure }
    }),
    ({ session, failure }) =>
      use({
        unary: (method, request) =>
          Effect.suspend(() => {
            const f = failure()
            return f !== undefined || session.destroyed
              ? Effect.fail(new GrpcUnavailable({ socket, detail: f?.message ?? "connection closed" }))
              : unaryOn(session, socket, method, request, timeoutMs, failure)
          })
      }),
    ({ session }) =>
      Effect.sync(() => {
        if (session.destroyed) return
        // A peer that never answers the GOAWAY must not keep the socket open; a session that closes in time
        // clears the timer (no wake-up a second after every batch).
        // Raw: the release must not wait for the peer, and a fiber per batch would outlive it; close clears it.
        const force = setTimeout(() => session.destroy(), 1000).unref()
        session.close(() => clearTimeout(force))
      })
  )
