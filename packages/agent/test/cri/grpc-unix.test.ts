import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { grpcFrame, unframeUnary, withGrpcConnection } from "../../src/cri/grpc-unix.ts"
import { criRuntimeClient } from "../../src/cri/runtime-client.ts"
import { type FakeContainerd, sandbox, startFakeContainerd } from "./fake-containerd.ts"

/** Polled on real time (the server is a real socket peer). */
const SOON = { timeoutMs: 3000, intervalMs: 1 }

describe("gRPC over a unix socket", () => {
  let dir: string
  let server: FakeContainerd
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "nodemend-grpc-"))
    server = await startFakeContainerd(join(dir, "cri.sock"))
  })
  afterEach(async () => {
    await server.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("a non-OK grpc-status other than NOT_FOUND is a GrpcStatusError with the decoded grpc-message", async () => {
    const e = await Effect.runPromise(
      withGrpcConnection(server.socket, 1_000, (c) =>
        c.unary("/runtime.v1.RuntimeService/Nope", new Uint8Array())
      ).pipe(Effect.flip)
    )
    expect(e).toMatchObject({ _tag: "GrpcStatusError", code: 12, detail: "unknown method" })
  })

  it("a response split over many DATA frames (the 5-byte prefix too) decodes as one message", async () => {
    const ips = Array.from({ length: 20 }, (_, i) => `2001:db8::${i + 1}`)
    server.sandboxes.set("s1", sandbox("s1", "default", "web-0", "10.0.1.5", ips))
    server.chunkBytes = 3
    const got = await Effect.runPromise(criRuntimeClient(server.socket).podSandboxStatuses(["s1"]))
    expect(got.get("s1")?.network).toEqual({ ip: "10.0.1.5", additionalIps: ips })
  })

  it("the connection is closed after a batch, after a failed call and after a timed-out one", async () => {
    server.sandboxes.set("s1", sandbox("s1", "default", "web-0", "10.0.1.5"))
    const client = criRuntimeClient(server.socket, 200)
    await Effect.runPromise(client.podSandboxStatuses(["s1", "unknown"]))
    await waitFor("the session to close after a batch", () => server.openSessions() === 0, SOON)
    await Effect.runPromise(
      withGrpcConnection(server.socket, 1_000, (c) =>
        c.unary("/runtime.v1.RuntimeService/Nope", new Uint8Array())
      ).pipe(Effect.flip)
    )
    await waitFor("the session to close after a failed call", () => server.openSessions() === 0, SOON)
    server.delayMs = 2_000
    const e = await Effect.runPromise(client.podSandboxStatuses(["s1"]).pipe(Effect.flip))
    expect(e._tag).toBe("GrpcTimeout")
    await waitFor("the session to close after a timeout", () => server.openSessions() === 0, SOON)
  })

  it("frames messages with a 5-byte prefix and refuses malformed bodies", () => {
    expect(grpcFrame(Uint8Array.from([1, 2, 3])).toString("hex")).toBe("0000000003010203")
    expect(unframeUnary(Buffer.from("0000000002abcd", "hex"))).toEqual(Buffer.from("abcd", "hex"))
    expect(typeof unframeUnary(Buffer.from("0100000002abcd", "hex"))).toBe("string") // compressed
    expect(typeof unframeUnary(Buffer.from("0000000009abcd", "hex"))).toBe("string") // short
    expect(typeof unframeUnary(Buffer.from("0000", "hex"))).toBe("string")
  })
})
