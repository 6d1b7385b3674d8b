/**
 * runtime.v1.RuntimeService/PodSandboxStatus request and response, encoded by hand (the agent carries no
 * gRPC or protobuf library). Field numbers are those of kubernetes/cri-api
 * `pkg/apis/runtime/v1/api.proto`:
 *
 *   message PodSandboxStatusRequest  { string pod_sandbox_id = 1; bool verbose = 2; }
 *   message PodSandboxStatusResponse { PodSandboxStatus status = 1; map<string,string> info = 2; ... }
 *   message PodSandboxStatus { string id = 1; PodSandboxMetadata metadata = 2; PodSandboxState state = 3;
 *                              int64 created_at = 4; PodSandboxNetworkStatus network = 5; ... }
 *   message PodSandboxMetadata { string name = 1; string uid = 2; string namespace = 3; uint32 attempt = 4; }
 *   message PodSandboxNetworkStatus { string ip = 1; repeated PodIP additional_ips = 2; }
 *   message PodIP { string ip = 1; }
 *   enum PodSandboxState { SANDBOX_READY = 0; SANDBOX_NOTREADY = 1; }
 *
 * Fields not listed (info, linux, labels, annotations, runtime_handler, container statuses) are skipped.
 */
import { asBytes, asString, asVarint, ProtoWriter, readFields } from "./protobuf.ts"

export const POD_SANDBOX_STATUS_METHOD = "/runtime.v1.RuntimeService/PodSandboxStatus"

export const SANDBOX_READY = 0
export const SANDBOX_NOTREADY = 1

export interface PodSandboxStatusRequest {
  readonly podSandboxId: string
  readonly verbose: boolean
}

export interface PodSandboxMetadata {
  readonly name: string
  readonly uid: string
  readonly namespace: string
  readonly attempt: number
}

export interface PodSandboxNetworkStatus {
  readonly ip: string
  readonly additionalIps: readonly string[]
}

export interface PodSandboxStatus {
  readonly id: string
  readonly metadata: PodSandboxMetadata | undefined
  readonly state: number
  readonly createdAt: bigint
  readonly network: PodSandboxNetworkStatus | undefined
}

export interface PodSandboxStatusResponse {
  readonly status: PodSandboxStatus | undefined
}

export const encodePodSandboxStatusRequest = (r: PodSandboxStatusRequest): Uint8Array =>
  new ProtoWriter().string(1, r.podSandboxId).bool(2, r.verbose).finish()

export const decodePodSandboxStatusRequest = (buf: Uint8Array): PodSandboxStatusRequest => {
  let podSandboxId = ""
  let verbose = false
  for (const f of readFields(buf)) {
    if (f.field === 1) podSandboxId = asString(f)
    else if (f.field === 2) verbose = asVarint(f) !== 0n
  }
  return { podSandboxId, verbose }
}

const encodeMetadata = (m: PodSandboxMetadata): Uint8Array =>
  new ProtoWriter().string(1, m.name).string(2, m.uid).string(3, m.namespace).int(4, m.attempt).finish()

const decodeMetadata = (buf: Uint8Array): PodSandboxMetadata => {
  let name = ""
  let uid = ""
  let namespace = ""
  let attempt = 0
  for (const f of readFields(buf)) {
    if (f.field === 1) name = asString(f)
    else if (f.field === 2) uid = asString(f)
    else if (f.field === 3) namespace = asString(f)
    else if (f.field === 4) attempt = Number(BigInt.asUintN(32, asVarint(f)))
  }
  return { name, uid, namespace, attempt }
}

const encodeNetwork = (n: PodSandboxNetworkStatus): Uint8Array => {
  const w = new ProtoWriter().string(1, n.ip)
  for (const ip of n.additionalIps) w.message(2, new ProtoWriter().string(1, ip).finish())
  return w.finish()
}

const decodeNetwork = (buf: Uint8Array): PodSandboxNetworkStatus => {
  let ip = ""
  const additionalIps: string[] = []
  for (const f of readFields(buf)) {
    if (f.field === 1) ip = asString(f)
    else if (f.field === 2) {
      let podIp = ""
      for (const g of readFields(asBytes(f))) if (g.field === 1) podIp = asString(g)
      additionalIps.push(podIp)
    }
  }
  return { ip, additionalIps }
}

const encodeStatus = (s: PodSandboxStatus): Uint8Array => {
  const w = new ProtoWriter().string(1, s.id)
  if (s.metadata !== undefined) w.message(2, encodeMetadata(s.metadata))
  w.int(3, s.state).int(4, s.createdAt)
  if (s.network !== undefined) w.message(5, encodeNetwork(s.network))
  return w.finish()
}

const decodeStatus = (buf: Uint8Array): PodSandboxStatus => {
  let id = ""
  let metadata: PodSandboxMetadata | undefined
  let state = 0
  let createdAt = 0n
  let network: PodSandboxNetworkStatus | undefined
  for (const f of readFields(buf)) {
    if (f.field === 1) id = asString(f)
    else if (f.field === 2) metadata = decodeMetadata(asBytes(f))
    else if (f.field === 3) state = Number(BigInt.asIntN(32, asVarint(f)))
    else if (f.field === 4) createdAt = BigInt.asIntN(64, asVarint(f))
    else if (f.field === 5) network = decodeNetwork(asBytes(f))
  }
  return { id, metadata, state, createdAt, network }
}

export const encodePodSandboxStatusResponse = (r: PodSandboxStatusResponse): Uint8Array => {
  const w = new ProtoWriter()
  if (r.status !== undefined) w.message(1, encodeStatus(r.status))
  return w.finish()
}

/** Throws ProtobufDecodeError on malformed input. */
export const decodePodSandboxStatusResponse = (buf: Uint8Array): PodSandboxStatusResponse => {
  let status: PodSandboxStatus | undefined
  for (const f of readFields(buf)) if (f.field === 1) status = decodeStatus(asBytes(f))
  return { status }
}

/** Every IP the runtime reports for the sandbox (primary first), empty when it has none. */
export const sandboxIps = (s: PodSandboxStatus): string[] =>
  [s.network?.ip ?? "", ...(s.network?.additionalIps ?? [])].filter((ip) => ip !== "")
