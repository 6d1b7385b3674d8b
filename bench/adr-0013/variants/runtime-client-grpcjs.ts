// biome-ignore-all lint/suspicious/noExplicitAny: the libraries' untyped results, in a measurement script
/** The agent's CriRuntimeClient on @grpc/grpc-js + protobufjs (a reflection Root built from JSON: no .proto file at run time). */
import * as grpc from "@grpc/grpc-js"
import protobuf from "protobufjs"
import { Effect } from "effect"
import {
  GrpcProtocolError,
  GrpcStatusError,
  GrpcTimeout,
  GrpcUnavailable,
  type GrpcError
} from "../../../packages/agent/src/cri/grpc-unix.ts"
import type { PodSandboxStatus } from "../../../packages/agent/src/cri/pod-sandbox-status.ts"

export const CONTAINERD_SOCKET = "run/containerd/containerd.sock"
export interface CriRuntimeClient {
  readonly socket: string
  readonly podSandboxStatuses: (
    ids: readonly string[]
  ) => Effect.Effect<ReadonlyMap<string, PodSandboxStatus | undefined>, GrpcError>
}
const METHOD = "/runtime.v1.RuntimeService/PodSandboxStatus"
const root = protobuf.Root.fromJSON({
  nested: {
    runtime: {
      nested: {
        v1: {
          nested: {
            PodSandboxStatusRequest: {
              fields: { podSandboxId: { type: "string", id: 1 }, verbose: { type: "bool", id: 2 } }
            },
            PodSandboxStatusResponse: { fields: { status: { type: "PodSandboxStatus", id: 1 } } },
            PodSandboxStatus: {
              fields: {
                id: { type: "string", id: 1 },
                metadata: { type: "PodSandboxMetadata", id: 2 },
                state: { type: "int32", id: 3 },
                createdAt: { type: "int64", id: 4 },
                network: { type: "PodSandboxNetworkStatus", id: 5 }
              }
            },
            PodSandboxMetadata: {
              fields: {
                name: { type: "string", id: 1 },
                uid: { type: "string", id: 2 },
                namespace: { type: "string", id: 3 },
                attempt: { type: "uint32", id: 4 }
              }
            },
            PodSandboxNetworkStatus: {
              fields: {
                ip: { type: "string", id: 1 },
                additionalIps: { rule: "repeated", type: "PodIP", id: 2 }
              }
            },
            PodIP: { fields: { ip: { type: "string", id: 1 } } }
          }
        }
      }
    }
  }
})
const Req = root.lookupType("runtime.v1.PodSandboxStatusRequest")
const Res = root.lookupType("runtime.v1.PodSandboxStatusResponse")

const toStatus = (m: any): PodSandboxStatus => ({
  id: m.id ?? "",
  metadata: m.metadata && {
    name: m.metadata.name ?? "",
    uid: m.metadata.uid ?? "",
    namespace: m.metadata.namespace ?? "",
    attempt: m.metadata.attempt ?? 0
  },
  state: m.state ?? 0,
  createdAt: BigInt(String(m.createdAt ?? 0)),
  network: m.network && {
    ip: m.network.ip ?? "",
    additionalIps: (m.network.additionalIps ?? []).map((p: any) => p.ip ?? "")
  }
})

export const criRuntimeClient = (
  socket: string,
  timeoutMs = 5_000,
  batchTimeoutMs = 15_000
): CriRuntimeClient => ({
  socket,
  podSandboxStatuses: (ids) =>
    ids.length === 0
      ? Effect.succeed(new Map())
      : Effect.acquireUseRelease(
          Effect.sync(() => new grpc.Client(`unix://${socket}`, grpc.credentials.createInsecure())),
          (client) =>
            Effect.forEach(
              ids,
              (id) =>
                Effect.callback<readonly [string, PodSandboxStatus | undefined], GrpcError>((resume) => {
                  client.makeUnaryRequest(
                    METHOD,
                    (r: object) => Buffer.from(Req.encode(Req.create(r)).finish()),
                    (b: Buffer) => Res.toObject(Res.decode(b), { longs: String }),
                    { podSandboxId: id, verbose: false },
                    { deadline: Date.now() + timeoutMs },
                    (err, res: any) => {
                      if (err === null)
                        return resume(
                          Effect.succeed([id, res?.status ? toStatus(res.status) : undefined] as const)
                        )
                      if (err.code === grpc.status.NOT_FOUND)
                        return resume(Effect.succeed([id, undefined] as const))
                      if (err.code === grpc.status.UNAVAILABLE)
                        return resume(Effect.fail(new GrpcUnavailable({ socket, detail: err.details })))
                      if (err.code === grpc.status.DEADLINE_EXCEEDED)
                        return resume(Effect.fail(new GrpcTimeout({ method: METHOD, timeoutMs })))
                      if (err.code === grpc.status.INTERNAL)
                        return resume(
                          Effect.fail(new GrpcProtocolError({ method: METHOD, detail: err.details }))
                        )
                      resume(
                        Effect.fail(
                          new GrpcStatusError({ method: METHOD, code: err.code, detail: err.details })
                        )
                      )
                    }
                  )
                }),
              { concurrency: 8 }
            ).pipe(Effect.map((pairs) => new Map(pairs))),
          (client) => Effect.sync(() => client.close())
        ).pipe(
          Effect.timeoutOrElse({
            duration: batchTimeoutMs,
            orElse: () => Effect.fail(new GrpcTimeout({ method: METHOD, timeoutMs: batchTimeoutMs }))
          })
        )
})
