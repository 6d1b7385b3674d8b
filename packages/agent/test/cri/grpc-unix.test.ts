import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { grpcFrame, unframeUnary, withGrpcConnection } from "../../src/cri/grpc-unix.ts"
import { type FakeContainerd, startFakeContainerd } from "./fake-containerd.ts"

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

  it("frames messages with a 5-byte prefix and refuses malformed bodies", () => {
    expect(grpcFrame(Uint8Array.from([1, 2, 3])).toString("hex")).toBe("0000000003010203")
    expect(unframeUnary(Buffer.from("0000000002abcd", "hex"))).toEqual(Buffer.from("abcd", "hex"))
    expect(typeof unframeUnary(Buffer.from("0100000002abcd", "hex"))).toBe("string") // compressed
    expect(typeof unframeUnary(Buffer.from("0000000009abcd", "hex"))).toBe("string") // short
    expect(typeof unframeUnary(Buffer.from("0000", "hex"))).toBe("string")
  })
})
