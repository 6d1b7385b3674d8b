/**
 * One loopback HTTP server for everything: EC2 Query and EC2 Auto Scaling Query (`POST /`, told apart by their
 * API `Version`), ARC REST-JSON (`/managedresources`, `/zonalshifts`, `/autoshifts`), and the admin API
 * (`/admin/...`), S3 PUT/GET object through presigned URLs (`/<bucket>/<key>`, s3/S3Routes.ts), and Prometheus
 * metrics (`GET /metrics`, CloudMetrics.ts). Point the EC2, Auto Scaling and ARC endpoint overrides of a client at its URL.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { AdminError, routeAdmin } from "./admin/AdminRoutes.ts"
import { CallCounts, callOutcome, renderMetrics } from "./CloudMetrics.ts"
import { routeArc } from "./arc/ArcRoutes.ts"
import { ArcError, ZonalShiftStore } from "./arc/ZonalShiftStore.ts"
import {
  AUTO_SCALING_API_VERSION,
  autoScalingErrorResponse,
  runAutoScalingAction
} from "./autoscaling/AutoScalingActions.ts"
import { AutoScalingError, type GroupSpec, GroupStore } from "./autoscaling/GroupStore.ts"
import { EC2_API_VERSION, runEc2Action } from "./ec2/Ec2Actions.ts"
import { parseQueryBody } from "./ec2/Ec2Query.ts"
import { ec2ErrorResponse, newRequestId } from "./ec2/Ec2Xml.ts"
import { type Api, Faults, type FaultSpec } from "./Faults.ts"
import { Ec2Error, InstanceStore, type StoreOptions } from "./InstanceStore.ts"
import { checkSigV4 } from "./SigV4Presence.ts"
import { ObjectStore } from "./s3/ObjectStore.ts"
import { handleS3Object, isS3ObjectRequest } from "./s3/S3Routes.ts"

export interface FakeCloudOptions extends StoreOptions {
  readonly host?: string
  readonly port?: number
  /** The EKS cluster ARN shifts apply to by default; when set, the only registered ARC resource. */
  readonly clusterArn?: string
  /** Auto Scaling groups that exist from the start (more through the admin API). */
  readonly autoScalingGroups?: ReadonlyArray<GroupSpec>
  /** How often groups replace members that died under them (ms; default 500). */
  readonly autoScalingReconcileMs?: number
  /**
   * Access key id -> secret access key: the keys whose presigned S3 URLs the fake accepts (it verifies the
   * signature, s3/PresignedAuth.ts). None: every S3 request is refused.
   */
  readonly s3Credentials?: Readonly<Record<string, string>>
}

export interface FakeCloud {
  readonly url: string
  readonly store: InstanceStore
  readonly shifts: ZonalShiftStore
  readonly groups: GroupStore
  readonly faults: Faults
  /** What presigned PUTs stored (S3 PUT/GET object, path-style, s3/S3Routes.ts). */
  readonly objects: ObjectStore
  readonly close: () => Promise<void>
}

const ARC_PATH = /^\/(?:managedresources|zonalshifts|autoshifts)(?:\/|$)/

function arcOperation(method: string, path: string): string {
  if (path.startsWith("/managedresources")) return "GetManagedResource"
  if (path.startsWith("/autoshifts")) return "ListAutoshifts"
  if (path === "/zonalshifts") return method === "POST" ? "StartZonalShift" : "ListZonalShifts"
  return "CancelZonalShift"
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export async function startFakeCloud(options: FakeCloudOptions): Promise<FakeCloud> {
  const store = new InstanceStore(options)
  const shifts = new ZonalShiftStore(store.zones, options.clusterArn ? [options.clusterArn] : undefined)
  const groups = new GroupStore(store, {
    ...(options.autoScalingReconcileMs !== undefined ? { reconcileMs: options.autoScalingReconcileMs } : {}),
    ...(options.log ? { log: options.log } : {})
  })
  for (const spec of options.autoScalingGroups ?? []) groups.create(spec)
  const faults = new Faults()
  const objects = new ObjectStore()
  const s3Credentials = new Map(Object.entries(options.s3Credentials ?? {}))
  const calls: Record<string, number> = {}
  const callCounts = new CallCounts()
  /** Counts the call (admin stats) and, once its answer is sent, its outcome (metrics); returns the fault it hits. */
  const takeCall = (api: Api, action: string, res: ServerResponse): FaultSpec | undefined => {
    calls[action] = (calls[action] ?? 0) + 1
    const fault = faults.take(api, action)
    res.once("finish", () =>
      callCounts.add(api, action, callOutcome(res.statusCode, fault?.kind === "throttle"))
    )
    return fault
  }
  const log = options.log ?? (() => {})

  const sendEc2Error = (
    res: ServerResponse,
    status: number,
    code: string,
    message: string,
    requestId: string
  ) => {
    res.writeHead(status, { "content-type": "text/xml;charset=UTF-8", "x-amzn-requestid": requestId })
    res.end(ec2ErrorResponse(code, message, requestId))
  }
  const sendArcError = (
    res: ServerResponse,
    status: number,
    code: string,
    message: string,
    requestId: string
  ) => {
    res.writeHead(status, {
      "content-type": "application/json",
      "x-amzn-errortype": `${code}:http://internal.amazon.com/coral/com.amazonaws.arczonalshift/`,
      "x-amzn-requestid": requestId
    })
    res.end(JSON.stringify({ message }))
  }

  const sendAutoScalingError = (
    res: ServerResponse,
    status: number,
    code: string,
    message: string,
    requestId: string
  ) => {
    res.writeHead(status, { "content-type": "text/xml", "x-amzn-requestid": requestId })
    res.end(autoScalingErrorResponse(code, message, requestId, status >= 500 ? "Receiver" : "Sender"))
  }

  /** Applies an injected fault that answers instead of the service; `slow` is handled after. */
  const faultAnswer = (api: Api, fault: FaultSpec, res: ServerResponse, requestId: string): boolean => {
    if (fault.kind === "slow") return false
    if (fault.kind === "throttle") {
      if (api === "ec2") sendEc2Error(res, 503, "RequestLimitExceeded", "Request limit exceeded.", requestId)
      else if (api === "autoScaling") sendAutoScalingError(res, 400, "Throttling", "Rate exceeded", requestId)
      else sendArcError(res, 429, "ThrottlingException", "Rate exceeded", requestId)
    } else {
      const status = fault.status ?? 500
      if (api === "autoScaling") {
        sendAutoScalingError(res, status, "InternalFailure", "An internal error has occurred", requestId)
      } else if (api === "ec2") {
        const code = status === 503 ? "Unavailable" : "InternalError"
        sendEc2Error(res, status, code, "An internal error has occurred", requestId)
      } else sendArcError(res, status, "InternalServerException", "An internal error has occurred", requestId)
    }
    return true
  }

  const handleEc2 = async (req: IncomingMessage, res: ServerResponse, body: string, requestId: string) => {
    const sig = checkSigV4(req.headers, "ec2")
    if (sig) {
      const [status, code] = sig.code === "missing" ? [401, "AuthFailure"] : [400, "IncompleteSignature"]
      return sendEc2Error(res, status, code, sig.message, requestId)
    }
    const params = parseQueryBody(body)
    const action = params.get("Action")
    if (!action)
      return sendEc2Error(
        res,
        400,
        "MissingAction",
        "The request must contain the parameter Action",
        requestId
      )
    if (params.get("Version") !== EC2_API_VERSION) {
      return sendEc2Error(
        res,
        400,
        "InvalidParameterValue",
        `Unsupported API version ${JSON.stringify(params.get("Version") ?? "")}; this endpoint serves ${EC2_API_VERSION}`,
        requestId
      )
    }
    const fault = takeCall("ec2", action, res)
    if (fault && faultAnswer("ec2", fault, res, requestId)) return
    let xml: string
    try {
      xml = runEc2Action(store, action, params, requestId)
    } catch (e) {
      if (e instanceof Ec2Error) return sendEc2Error(res, e.status, e.code, e.message, requestId)
      throw e
    }
    if (fault?.kind === "slow") await sleep(fault.delayMs ?? 5000)
    res.writeHead(200, { "content-type": "text/xml;charset=UTF-8", "x-amzn-requestid": requestId })
    res.end(xml)
  }

  const handleAutoScaling = async (
    req: IncomingMessage,
    res: ServerResponse,
    params: ReturnType<typeof parseQueryBody>,
    requestId: string
  ) => {
    const sig = checkSigV4(req.headers, "autoscaling")
    if (sig) {
      const [status, code] =
        sig.code === "missing" ? [403, "MissingAuthenticationToken"] : [400, "IncompleteSignature"]
      return sendAutoScalingError(res, status, code, sig.message, requestId)
    }
    const action = params.get("Action") ?? ""
    const fault = takeCall("autoScaling", action, res)
    if (fault && faultAnswer("autoScaling", fault, res, requestId)) return
    let xml: string
    try {
      xml = runAutoScalingAction(groups, (z) => store.zoneByName(z)?.subnetId, action, params, requestId)
    } catch (e) {
      if (e instanceof AutoScalingError)
        return sendAutoScalingError(res, e.status, e.code, e.message, requestId)
      throw e
    }
    if (fault?.kind === "slow") await sleep(fault.delayMs ?? 5000)
    res.writeHead(200, { "content-type": "text/xml", "x-amzn-requestid": requestId })
    res.end(xml)
  }

  const handleArc = async (
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    body: string,
    requestId: string
  ) => {
    const sig = checkSigV4(req.headers, "arc-zonal-shift")
    if (sig) {
      const [status, code] =
        sig.code === "missing"
          ? [403, "MissingAuthenticationTokenException"]
          : [400, "IncompleteSignatureException"]
      return sendArcError(res, status, code, sig.message, requestId)
    }
    const operation = arcOperation(req.method ?? "GET", url.pathname)
    const fault = takeCall("arc", operation, res)
    if (fault && faultAnswer("arc", fault, res, requestId)) return
    let reply: ReturnType<typeof routeArc>
    try {
      reply = routeArc(shifts, req.method ?? "GET", url, body)
    } catch (e) {
      if (e instanceof ArcError) return sendArcError(res, e.status, e.code, e.message, requestId)
      throw e
    }
    if (!reply)
      return sendArcError(res, 404, "UnknownOperationException", `No operation at ${url.pathname}`, requestId)
    if (fault?.kind === "slow") await sleep(fault.delayMs ?? 5000)
    res.writeHead(reply.status, { "content-type": "application/json", "x-amzn-requestid": requestId })
    res.end(JSON.stringify(reply.body))
  }

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const requestId = newRequestId()
    const url = new URL(req.url ?? "/", "http://fake")
    const method = req.method ?? "GET"
    // Before the body is read as text: an object is bytes.
    if (isS3ObjectRequest(method, url.pathname)) return handleS3Object(req, res, objects, s3Credentials, log)
    const body = await readBody(req)
    if (url.pathname === "/metrics" && method === "GET") {
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4" })
      return res.end(
        renderMetrics(callCounts, {
          instanceStates: store.describe([]).map((i) => i.state),
          activeZonalShifts: shifts.active().length,
          activeAutoshifts: shifts.activeAutoshifts().length,
          faults: faults.list()
        })
      )
    }
    if (url.pathname === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" })
      return res.end("ok")
    }
    if (url.pathname.startsWith("/admin/")) {
      try {
        const reply = await routeAdmin(
          { store, shifts, groups, faults, calls, defaultResourceArn: options.clusterArn },
          method,
          url.pathname,
          body
        )
        res.writeHead(reply?.status ?? 404, { "content-type": "application/json" })
        return res.end(JSON.stringify(reply?.body ?? { error: `no admin route ${method} ${url.pathname}` }))
      } catch (e) {
        const status =
          e instanceof AdminError ||
          e instanceof ArcError ||
          e instanceof Ec2Error ||
          e instanceof AutoScalingError
            ? e.status
            : 500
        res.writeHead(status, { "content-type": "application/json" })
        return res.end(JSON.stringify({ error: e instanceof Error ? e.message : String(e) }))
      }
    }
    if (ARC_PATH.test(url.pathname)) return handleArc(req, res, url, body, requestId)
    if (method === "POST" && url.pathname === "/") {
      const params = parseQueryBody(body)
      if (params.get("Version") === AUTO_SCALING_API_VERSION)
        return handleAutoScaling(req, res, params, requestId)
      return handleEc2(req, res, body, requestId)
    }
    return sendEc2Error(
      res,
      404,
      "InvalidAction",
      `Nothing is served at ${method} ${url.pathname}`,
      requestId
    )
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      log(`request failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
      if (!res.headersSent)
        sendEc2Error(res, 500, "InternalError", "An internal error has occurred", newRequestId())
      else res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve)
  })
  const addr = server.address() as AddressInfo
  return {
    url: `http://${addr.address}:${addr.port}`,
    store,
    shifts,
    groups,
    faults,
    objects,
    close: () =>
      new Promise<void>((resolve) => {
        groups.close()
        store.close()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
