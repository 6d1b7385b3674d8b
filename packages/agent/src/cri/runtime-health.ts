/**
 * The CRI calls of the container runtime's health probe (runtime-health check), as node-problem-detector's
 * health-checker-containerd makes them through `crictl pods` (ListPodSandbox) and as kubelet asks for the
 * runtime's conditions (Status). Messages of cri-api's pkg/apis/runtime/v1/api.proto:
 *
 *   message StatusRequest { bool verbose = 1; }
 *   message StatusResponse { RuntimeStatus status = 1; map<string, string> info = 2; ... }
 *   message RuntimeStatus { repeated RuntimeCondition conditions = 1; }
 *   message RuntimeCondition { string type = 1; bool status = 2; string reason = 3; string message = 4; }
 *   message ListPodSandboxRequest { PodSandboxFilter filter = 1; }
 */
import { asBytes, asString, asVarint, ProtoWriter, readFields } from "./protobuf.ts"

export const STATUS_METHOD = "/runtime.v1.RuntimeService/Status"
export const LIST_POD_SANDBOX_METHOD = "/runtime.v1.RuntimeService/ListPodSandbox"
/** The condition that says the runtime can run containers (cri-api: RuntimeReady). */
export const RUNTIME_READY = "RuntimeReady"

export interface RuntimeCondition {
  readonly type: string
  readonly status: boolean
  readonly reason: string
  readonly message: string
}

export const encodeStatusRequest = (verbose: boolean): Uint8Array =>
  new ProtoWriter().bool(1, verbose).finish()
export const encodeListPodSandboxRequest = (): Uint8Array => new ProtoWriter().finish()

const decodeCondition = (buf: Uint8Array): RuntimeCondition => {
  let type = ""
  let status = false
  let reason = ""
  let message = ""
  for (const f of readFields(buf)) {
    if (f.field === 1) type = asString(f)
    else if (f.field === 2) status = asVarint(f) !== 0n
    else if (f.field === 3) reason = asString(f)
    else if (f.field === 4) message = asString(f)
  }
  return { type, status, reason, message }
}

/** The runtime's conditions from a StatusResponse; other fields (info, handlers, features) are skipped. */
export const decodeStatusResponse = (buf: Uint8Array): RuntimeCondition[] => {
  const out: RuntimeCondition[] = []
  for (const f of readFields(buf)) {
    if (f.field !== 1) continue
    for (const c of readFields(asBytes(f))) if (c.field === 1) out.push(decodeCondition(asBytes(c)))
  }
  return out
}

/** For test doubles: a StatusResponse carrying these conditions. */
export const encodeStatusResponse = (conditions: readonly RuntimeCondition[]): Uint8Array => {
  const status = new ProtoWriter()
  for (const c of conditions)
    status.message(
      1,
      new ProtoWriter().string(1, c.type).bool(2, c.status).string(3, c.reason).string(4, c.message).finish()
    )
  return new ProtoWriter().message(1, status.finish()).finish()
}

/**
 * Why the runtime is not ready, or undefined when it is: RuntimeReady false. A runtime that reports no
 * RuntimeReady condition at all is not judged on it (the ListPodSandbox call still is).
 */
export const runtimeNotReady = (conditions: readonly RuntimeCondition[]): string | undefined => {
  const c = conditions.find((x) => x.type === RUNTIME_READY)
  if (c === undefined || c.status) return undefined
  return `RuntimeReady is false${c.reason === "" ? "" : ` (${c.reason}${c.message === "" ? "" : `: ${c.message}`})`}`
}
