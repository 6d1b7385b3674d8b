// The ARC client against a loopback HTTP server that re-computes the SigV4 signature of every
// request it receives (same credentials, same x-amz-date) and answers like ARC does.
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeArcZonalShiftClient } from "../../src/cloud/aws/ArcZonalShiftClient.ts"
import { Hash, HttpRequest, SignatureV4 } from "../../src/cloud/aws/awsSdk.ts"

const credentials = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
}
const ARN = "arn:aws:eks:us-west-2:111122223333:cluster/prod"

interface Seen {
  path: string
  signatureOk: boolean
}
const seen: Seen[] = []
let reply: (req: IncomingMessage) => { status: number; headers?: Record<string, string>; body: string }
let server: Server
let endpoint: string

async function verify(req: IncomingMessage): Promise<boolean> {
  const url = new URL(req.url ?? "/", "http://x")
  const auth = req.headers.authorization ?? ""
  const amzDate = String(req.headers["x-amz-date"] ?? "")
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/us-west-2\/arc-zonal-shift\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      auth
    )
  if (!m) return false
  const signedHeaders = m[3]!.split(";")
  const headers: Record<string, string> = {}
  for (const h of signedHeaders) headers[h] = String(req.headers[h] ?? "")
  const query: Record<string, string> = {}
  for (const [k, v] of url.searchParams) query[k] = v
  const signer = new SignatureV4({
    service: "arc-zonal-shift",
    region: "us-west-2",
    credentials,
    sha256: Hash.bind(null, "sha256")
  })
  const iso = amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, "$1-$2-$3T$4:$5:$6Z")
  const again = await signer.sign(
    new HttpRequest({
      method: req.method ?? "GET",
      protocol: "http:",
      hostname: "127.0.0.1",
      path: url.pathname,
      query,
      headers
    }),
    { signingDate: new Date(iso) }
  )
  return again.headers.authorization === auth
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void verify(req).then((signatureOk) => {
      seen.push({ path: req.url ?? "", signatureOk })
      const r = reply(req)
      res.writeHead(r.status, { "content-type": "application/json", ...r.headers })
      res.end(r.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const client = (maxAttempts = 3) =>
  makeArcZonalShiftClient({
    region: "us-west-2",
    endpoint,
    credentials: async () => credentials,
    requestTimeoutMs: 2000,
    maxAttempts
  })

describe("ArcZonalShiftClient", () => {
  it("signs GetManagedResource for the URL-encoded cluster ARN and decodes the answer", async () => {
    seen.length = 0
    reply = () => ({
      status: 200,
      body: JSON.stringify({
        arn: ARN,
        zonalShifts: [
          {
            appliedStatus: "APPLIED",
            awayFrom: "usw2-az1",
            expiryTime: 1e10,
            startTime: 1,
            zonalShiftId: "zs"
          }
        ],
        autoshifts: []
      })
    })
    const r = await Effect.runPromise(client().getManagedResource(ARN))
    expect(r.zonalShifts[0]?.awayFrom).toBe("usw2-az1")
    expect(seen).toEqual([{ path: `/managedresources/${encodeURIComponent(ARN)}`, signatureOk: true }])
  })

  it("follows nextToken pages of ListZonalShifts with signed query strings", async () => {
    seen.length = 0
    reply = (req) => {
      const token = new URL(req.url ?? "/", "http://x").searchParams.get("nextToken")
      const item = (id: string) => ({
        awayFrom: "usw2-az1",
        expiryTime: 1e10,
        startTime: 1,
        resourceIdentifier: ARN,
        status: "ACTIVE",
        zonalShiftId: id
      })
      return {
        status: 200,
        body: JSON.stringify(token ? { items: [item("b")] } : { items: [item("a")], nextToken: "t/1+=" })
      }
    }
    const items = await Effect.runPromise(client().listActiveZonalShifts(ARN))
    expect(items.map((i) => i.zonalShiftId)).toEqual(["a", "b"])
    expect(seen.every((s) => s.signatureOk)).toBe(true)
    expect(seen[1]?.path).toContain("nextToken=t%2F1%2B%3D")
  })

  it("retries throttling up to maxAttempts, then fails with a retryable CloudError", async () => {
    seen.length = 0
    reply = () => ({
      status: 429,
      headers: {
        "x-amzn-ErrorType":
          "ThrottlingException:http://internal.amazon.com/coral/com.amazonaws.arczonalshift/"
      },
      body: JSON.stringify({ message: "Rate exceeded" })
    })
    const exit = await Effect.runPromiseExit(client(3).listActiveAutoshifts)
    expect(seen.length).toBe(3)
    expect(Exit.isFailure(exit)).toBe(true)
    const err = Exit.isFailure(exit) ? (exit.cause.reasons[0] as { error?: unknown }).error : undefined
    expect(err).toMatchObject({ _tag: "CloudError", operation: "ListAutoshifts", retryable: true })
    expect(String((err as Error).message)).toContain("ThrottlingException")
  })

  it("does not retry ResourceNotFoundException and reports it", async () => {
    seen.length = 0
    reply = () => ({
      status: 404,
      headers: { "x-amzn-ErrorType": "ResourceNotFoundException" },
      body: JSON.stringify({ message: "resource not registered" })
    })
    const exit = await Effect.runPromiseExit(client(3).getManagedResource(ARN))
    expect(seen.length).toBe(1)
    expect(JSON.stringify(exit)).toContain("resource not registered")
  })

  it("a malformed success body is a non-retryable CloudError", async () => {
    seen.length = 0
    reply = () => ({ status: 200, body: JSON.stringify({ zonalShifts: [{ awayFrom: 3 }] }) })
    const exit = await Effect.runPromiseExit(client(3).getManagedResource(ARN))
    expect(seen.length).toBe(1)
    expect(JSON.stringify(exit)).toContain("unexpected response")
  })
})
