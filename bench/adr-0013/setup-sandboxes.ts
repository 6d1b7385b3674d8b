import { Effect } from "effect"
import { withGrpcConnection } from "../../packages/agent/src/cri/grpc-unix.ts"
import { ProtoWriter, readFields, asString, asBytes } from "../../packages/agent/src/cri/protobuf.ts"
const sock = process.env.CRI_SOCKET!
const op = process.argv[2]
const msg = () => new ProtoWriter()
await Effect.runPromise(
  withGrpcConnection(sock, 30000, (c) =>
    Effect.gen(function* () {
      if (op === "up") {
        for (let i = 0; i < 6; i++) {
          const cfg = msg()
            .message(1, msg().string(1, `p${i}`).string(2, `uid-${i}`).string(3, "adr").finish())
            .message(
              8,
              msg()
                .string(1, "/nodemend-adr27")
                .message(2, msg().message(1, msg().int(1, 2).finish()).finish())
                .finish()
            )
            .finish()
          yield* c.unary("/runtime.v1.RuntimeService/RunPodSandbox", msg().message(1, cfg).finish())
        }
      }
      const l = yield* c.unary("/runtime.v1.RuntimeService/ListPodSandbox", new Uint8Array())
      const ids = readFields(l).map((f) => asString(readFields(asBytes(f))[0]!))
      if (op === "down")
        for (const id of ids) {
          yield* c.unary("/runtime.v1.RuntimeService/StopPodSandbox", msg().string(1, id).finish())
          yield* c.unary("/runtime.v1.RuntimeService/RemovePodSandbox", msg().string(1, id).finish())
        }
      console.log(JSON.stringify(ids))
    })
  )
)
