// The fake's wire protocols, spoken by hand (no SDK): EC2 Query + XML, ARC REST-JSON, admin JSON.
// Instances live in memory here; the kwok-Node-backed store is exercised by the cluster e2e tests.
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AdminClient } from "../src/admin/AdminClient.ts"
import { type FakeCloud, startFakeCloud } from "../src/FakeCloudServer.ts"
import { nodeCapacityOf } from "../src/ec2/InstanceTypes.ts"

const ARN = "arn:aws:eks:us-west-2:111122223333:cluster/demo"
let cloud: FakeCloud
let admin: AdminClient

const amzDate = () =>
  new Date()
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "")
const auth = (service: string) => {
  const d = amzDate()
  return {
    "x-amz-date": d,
    authorization: `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/${d.slice(0, 8)}/us-west-2/${service}/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"a".repeat(64)}`
  }
}

async function ec2(params: Record<string, string>, headers: Record<string, string> = auth("ec2")) {
  const res = await fetch(cloud.url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8", ...headers },
    body: new URLSearchParams({ Version: "2016-11-15", ...params }).toString()
  })
  return { status: res.status, xml: await res.text() }
}

async function arc(method: string, path: string, body?: unknown, headers = auth("arc-zonal-shift")) {
  const res = await fetch(`${cloud.url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return {
    status: res.status,
    errorType: res.headers.get("x-amzn-errortype"),
    // biome-ignore lint/suspicious/noExplicitAny: assertions below walk arbitrary ARC JSON
    json: (await res.json()) as any
  }
}

const all = (xml: string, tag: string) =>
  [...xml.matchAll(new RegExp(`<${tag}>([^<]*)</${tag}>`, "g"))].map((m) => m[1])
const one = (xml: string, tag: string) => all(xml, tag)[0]
/** The fake cloud answers within milliseconds: a short timeout, polled often. */
const FAST = { timeoutMs: 3000, intervalMs: 10 }
const stateOf = async (id: string) =>
  one((await ec2({ Action: "DescribeInstances", "InstanceId.1": id })).xml, "name")
const waitForState = (id: string, state: string) =>
  waitFor(`${id} ${state}`, async () => (await stateOf(id)) === state, FAST)
/** An EC2 error answer as [HTTP status, error code]. */
const ec2Error = (r: { status: number; xml: string }) => [r.status, one(r.xml, "Code")]
/** An ARC error answer as [HTTP status, error type without its message]. */
const arcError = (r: { status: number; errorType: string | null }) => [r.status, r.errorType?.split(":")[0]]

/** RunInstances of one instance unless `params` say otherwise. */
const runInstances = (params: Record<string, string>) =>
  ec2({ Action: "RunInstances", MinCount: "1", MaxCount: "1", ...params })
const M5 = { InstanceType: "m5.large", ImageId: "ami-1" }
const P5_FROM_TEMPLATE = {
  InstanceType: "p5.48xlarge",
  SubnetId: "subnet-0fake00000000000b",
  "LaunchTemplate.LaunchTemplateId": "lt-0123456789abcdef0",
  "LaunchTemplate.Version": "3",
  ClientToken: "tok-1"
}
/** Launches one m5.large and waits until it runs; returns its instance id. */
const launchRunning = async () => {
  const id = one((await runInstances(M5)).xml, "instanceId")!
  await waitForState(id, "running")
  return id
}

beforeAll(async () => {
  cloud = await startFakeCloud({
    region: "us-west-2",
    bootDelayMs: 20,
    terminateDelayMs: 20,
    clusterArn: ARN
  })
  admin = new AdminClient(cloud.url)
})
afterAll(() => cloud.close())

describe("EC2 Query protocol", () => {
  it("answers an unsigned request with AuthFailure in the EC2 error shape", async () => {
    const r = await ec2({ Action: "DescribeInstances" }, {})
    expect(r.status).toBe(401)
    expect(r.xml).toMatch(
      /^<\?xml[^>]*>\n<Response><Errors><Error><Code>AuthFailure<\/Code><Message>[^<]+<\/Message><\/Error><\/Errors><RequestID>[0-9a-f-]{36}<\/RequestID><\/Response>$/
    )
  })

  it("rejects a malformed signature, an unknown action and a wrong API version", async () => {
    const bad = await ec2({ Action: "DescribeInstances" }, { authorization: "AWS4-HMAC-SHA256 Credential=x" })
    expect(ec2Error(bad)).toEqual([400, "IncompleteSignature"])
    const action = await ec2({ Action: "LaunchRockets" })
    expect(ec2Error(action)).toEqual([400, "InvalidAction"])
    const version = await ec2({ Action: "DescribeInstances", Version: "2014-01-01" })
    expect(one(version.xml, "Code")).toBe("InvalidParameterValue")
  })

  it("RunInstances launches pending -> running with tags, zone and launch-template tags", async () => {
    const r = await runInstances({
      ...P5_FROM_TEMPLATE,
      "TagSpecification.1.ResourceType": "instance",
      "TagSpecification.1.Tag.1.Key": "nodemend.io/pool",
      "TagSpecification.1.Tag.1.Value": "gpu"
    })
    expect(r.status).toBe(200)
    expect(r.xml).toContain(
      '<RunInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>'
    )
    const id = one(r.xml, "instanceId")!
    expect(id).toMatch(/^i-[0-9a-f]{17}$/)
    expect(one(r.xml, "name")).toBe("pending")
    expect(one(r.xml, "availabilityZone")).toBe("us-west-2b")
    expect(all(r.xml, "key")).toEqual([
      "nodemend.io/pool",
      "aws:ec2launchtemplate:id",
      "aws:ec2launchtemplate:version"
    ])
    await waitForState(id, "running")

    // Same ClientToken: the same instance, not a second one.
    const again = await runInstances(P5_FROM_TEMPLATE)
    expect(one(again.xml, "instanceId")).toBe(id)
    const mismatch = await runInstances({ ...M5, ClientToken: "tok-1" })
    expect(one(mismatch.xml, "Code")).toBe("IdempotentParameterMismatch")
  })

  it("a launch template marked broken through the admin API: its instances from then on carry the fault; mended, not", async () => {
    const BROKEN = { ...P5_FROM_TEMPLATE, "LaunchTemplate.LaunchTemplateId": "lt-0badbadbadbadbad0" }
    const fault = {
      type: "KernelReady",
      status: "False",
      reason: "ForkFailedOutOfPIDs",
      message: "bad image"
    }
    await admin.breakLaunchTemplate("lt-0badbadbadbadbad0", fault)
    const broken = one((await runInstances({ ...BROKEN, ClientToken: "tok-broken-1" })).xml, "instanceId")!
    const other = one(
      (await runInstances({ ...P5_FROM_TEMPLATE, ClientToken: "tok-broken-2" })).xml,
      "instanceId"
    )!
    await admin.mendLaunchTemplate("lt-0badbadbadbadbad0")
    const mended = one((await runInstances({ ...BROKEN, ClientToken: "tok-broken-3" })).xml, "instanceId")!
    const [b, o, m] = cloud.store.describe([broken, other, mended])
    expect(b?.fault).toEqual(fault)
    expect(o?.fault).toBeUndefined()
    expect(m?.fault).toBeUndefined()
  })

  it("a launch template broken with missing GPUs: its instances come up short of their type's GPUs", async () => {
    const BROKEN = { ...P5_FROM_TEMPLATE, "LaunchTemplate.LaunchTemplateId": "lt-0badbadbadbadbad1" }
    await admin.breakLaunchTemplate("lt-0badbadbadbadbad1", { missingGpus: 1 })
    const short = one((await runInstances({ ...BROKEN, ClientToken: "tok-gpu-1" })).xml, "instanceId")!
    await admin.mendLaunchTemplate("lt-0badbadbadbadbad1")
    const whole = one((await runInstances({ ...BROKEN, ClientToken: "tok-gpu-2" })).xml, "instanceId")!
    const [s, w] = cloud.store.describe([short, whole])
    expect([s?.missingGpus, s?.fault]).toEqual([1, undefined])
    expect(w?.missingGpus).toBeUndefined()
    expect(nodeCapacityOf("p5.48xlarge", s?.missingGpus)["nvidia.com/gpu"]).toBe("7")
    expect(nodeCapacityOf("p5.48xlarge")["nvidia.com/gpu"]).toBe("8")
    expect(
      (
        await fetch(`${cloud.url}/admin/launch-templates/lt-1/broken`, {
          method: "PUT",
          body: '{"missingGpus":0}'
        })
      ).status
    ).toBe(400)
  })

  it("DescribeInstanceTypes: the types' GPUs as EC2 reports them; an unknown type is InvalidInstanceType", async () => {
    const r = await ec2({
      Action: "DescribeInstanceTypes",
      "InstanceType.1": "p5.48xlarge",
      "InstanceType.2": "g5.xlarge"
    })
    expect(r.status).toBe(200)
    expect(all(r.xml, "instanceType")).toEqual(["p5.48xlarge", "g5.xlarge"])
    expect(all(r.xml, "count")).toEqual(["8", "1"])
    expect(all(r.xml, "name")).toEqual(["H100", "A10G"])
    const m5 = await ec2({ Action: "DescribeInstanceTypes", "InstanceType.1": "m5.large" })
    expect(m5.xml).not.toContain("<gpuInfo>")
    expect(ec2Error(await ec2({ Action: "DescribeInstanceTypes", "InstanceType.1": "p9.huge" }))).toEqual([
      400,
      "InvalidInstanceType"
    ])
  })

  it("boots after the fake-cloud:boot-delay-ms tag's delay when RunInstances carries it", async () => {
    const tagged = (ms: string) => ({
      ...M5,
      "TagSpecification.1.ResourceType": "instance",
      "TagSpecification.1.Tag.1.Key": "fake-cloud:boot-delay-ms",
      "TagSpecification.1.Tag.1.Value": ms
    })
    const slow = one((await runInstances(tagged("60000"))).xml, "instanceId")!
    const quick = one((await runInstances(tagged("0"))).xml, "instanceId")!
    const bad = one((await runInstances(tagged("soon"))).xml, "instanceId")!
    await waitForState(quick, "running")
    await waitForState(bad, "running") // an unreadable value: the store's default (20 ms here)
    expect(await stateOf(slow)).toBe("pending")
  })

  it("validates RunInstances input", async () => {
    const noSubnet = await runInstances({ ...M5, SubnetId: "subnet-nope" })
    expect(one(noSubnet.xml, "Code")).toBe("InvalidSubnetID.NotFound")
    const noCount = await ec2({ Action: "RunInstances", InstanceType: "m5.large", ImageId: "ami-1" })
    expect(one(noCount.xml, "Code")).toBe("MissingParameter")
  })

  it("TerminateInstances is idempotent: one effect, then shutting-down -> terminated", async () => {
    const id = await launchRunning()
    const t1 = await ec2({ Action: "TerminateInstances", "InstanceId.1": id })
    expect(t1.xml).toMatch(
      /<currentState><code>32<\/code><name>shutting-down<\/name><\/currentState><previousState><code>16<\/code><name>running<\/name><\/previousState>/
    )
    const t2 = await ec2({ Action: "TerminateInstances", "InstanceId.1": id })
    expect(t2.status).toBe(200)
    await waitForState(id, "terminated")
    const t3 = await ec2({ Action: "TerminateInstances", "InstanceId.1": id })
    expect(t3.xml).toContain("<currentState><code>48</code><name>terminated</name></currentState>")
    expect((await admin.stats()).terminationsStarted[id]).toBe(1)
  })

  it("reports unknown and malformed instance ids like EC2", async () => {
    const missing = await ec2({ Action: "DescribeInstances", "InstanceId.1": "i-0000000000000000f" })
    expect(ec2Error(missing)).toEqual([400, "InvalidInstanceID.NotFound"])
    const bad = await ec2({ Action: "TerminateInstances", "InstanceId.1": "node-1" })
    expect(one(bad.xml, "Code")).toBe("InvalidInstanceID.Malformed")
  })

  it("filters DescribeInstances by state and tag", async () => {
    const run = await runInstances({
      MinCount: "2",
      MaxCount: "2",
      ...M5,
      "TagSpecification.1.ResourceType": "instance",
      "TagSpecification.1.Tag.1.Key": "team",
      "TagSpecification.1.Tag.1.Value": "filters"
    })
    const ids = all(run.xml, "instanceId")
    expect(ids).toHaveLength(2)
    const r = await ec2({
      Action: "DescribeInstances",
      "Filter.1.Name": "tag:team",
      "Filter.1.Value.1": "filters",
      "Filter.2.Name": "instance-state-name",
      "Filter.2.Value.1": "pending",
      "Filter.2.Value.2": "running"
    })
    expect(all(r.xml, "instanceId").sort()).toEqual([...ids].sort())
  })

  it("RebootInstances gives a running instance a new boot id", async () => {
    const id = await launchRunning()
    const before = (await admin.instances()).find((i) => i.instanceId === id)!.bootId
    const r = await ec2({ Action: "RebootInstances", "InstanceId.1": id })
    expect(one(r.xml, "return")).toBe("true")
    expect((await admin.instances()).find((i) => i.instanceId === id)!.bootId).not.toBe(before)
    expect((await admin.stats()).reboots[id]).toBe(1)
  })
})

describe("fault injection", () => {
  it("throttles the next EC2 call with RequestLimitExceeded 503, then serves normally", async () => {
    await admin.injectFault({ kind: "throttle", target: "ec2", action: "DescribeInstances", count: 2 })
    const a = await ec2({ Action: "DescribeInstances" })
    const b = await ec2({ Action: "DescribeInstances" })
    const c = await ec2({ Action: "DescribeInstances" })
    expect([a.status, one(a.xml, "Code"), b.status, c.status]).toEqual([
      503,
      "RequestLimitExceeded",
      503,
      200
    ])
  })

  it("5xx and slow answers", async () => {
    await admin.injectFault({ kind: "error", target: "ec2", status: 503 })
    const a = await ec2({ Action: "DescribeInstances" })
    expect(ec2Error(a)).toEqual([503, "Unavailable"])
    await admin.injectFault({ kind: "slow", target: "arc", delayMs: 150 })
    const t0 = Date.now()
    const r = await arc("GET", `/managedresources/${encodeURIComponent(ARN)}`)
    expect(r.status).toBe(200)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140)
  })
})

describe("ARC REST-JSON", () => {
  const path = `/managedresources/${encodeURIComponent(ARN)}`

  it("rejects unsigned requests with x-amzn-ErrorType", async () => {
    const r = await arc("GET", path, undefined, {} as ReturnType<typeof auth>)
    expect(r.status).toBe(403)
    expect(r.errorType).toMatch(/^MissingAuthenticationTokenException:/)
    expect(r.json.message).toBeTypeOf("string")
  })

  it("GetManagedResource reflects shifts and autoshifts started and ended via admin", async () => {
    expect((await arc("GET", path)).json.zonalShifts).toEqual([])
    const shift = await admin.startZonalShift({ awayFrom: "us-west-2a", expiresInMinutes: 30 })
    const r1 = await arc("GET", path)
    expect(r1.json.zonalShifts).toEqual([
      expect.objectContaining({
        awayFrom: "usw2-az1",
        appliedStatus: "APPLIED",
        zonalShiftId: shift.zonalShiftId
      })
    ])
    expect(r1.json.appliedWeights).toEqual({ "usw2-az1": 0, "usw2-az2": 1, "usw2-az3": 1 })
    expect(r1.json.zonalShifts[0].expiryTime).toBeGreaterThan(Date.now() / 1000 + 29 * 60)

    await admin.startAutoshift("usw2-az2")
    const r2 = await arc("GET", path)
    expect(r2.json.autoshifts).toEqual([
      expect.objectContaining({ awayFrom: "usw2-az2", appliedStatus: "NOT_APPLIED" })
    ])
    await admin.cancelZonalShift(shift.zonalShiftId)
    const r3 = await arc("GET", path)
    expect(r3.json.zonalShifts).toEqual([])
    expect(r3.json.autoshifts).toEqual([
      expect.objectContaining({ awayFrom: "usw2-az2", appliedStatus: "APPLIED" })
    ])
    expect((await arc("GET", "/autoshifts?status=ACTIVE")).json.items).toEqual([
      expect.objectContaining({ awayFrom: "usw2-az2", status: "ACTIVE" })
    ])
    await admin.endAutoshift("us-west-2b")
    expect((await arc("GET", path)).json.autoshifts).toEqual([])
    expect((await arc("GET", "/autoshifts?status=COMPLETED")).json.items).toHaveLength(1)
  })

  it("StartZonalShift / ListZonalShifts / CancelZonalShift through the ARC API itself", async () => {
    const s = await arc("POST", "/zonalshifts", {
      resourceIdentifier: ARN,
      awayFrom: "usw2-az3",
      expiresIn: "10m",
      comment: "test"
    })
    expect(s.json.status).toBe("ACTIVE")
    const list = await arc("GET", `/zonalshifts?status=ACTIVE&resourceIdentifier=${encodeURIComponent(ARN)}`)
    expect(list.json.items.map((i: { zonalShiftId: string }) => i.zonalShiftId)).toEqual([
      s.json.zonalShiftId
    ])
    const c = await arc("DELETE", `/zonalshifts/${s.json.zonalShiftId}`)
    expect(c.json.status).toBe("CANCELED")
    const bad = await arc("POST", "/zonalshifts", {
      resourceIdentifier: ARN,
      awayFrom: "usw2-az3",
      expiresIn: "9d",
      comment: ""
    })
    expect(arcError(bad)).toEqual([400, "ValidationException"])
  })

  it("an unregistered resource is ResourceNotFoundException; throttling is ThrottlingException 429", async () => {
    const r = await arc(
      "GET",
      `/managedresources/${encodeURIComponent("arn:aws:eks:us-west-2:111122223333:cluster/other")}`
    )
    expect(arcError(r)).toEqual([404, "ResourceNotFoundException"])
    await admin.injectFault({ kind: "throttle", target: "arc" })
    const t = await arc("GET", path)
    expect(arcError(t)).toEqual([429, "ThrottlingException"])
  })
})

describe("admin", () => {
  it("adopts an existing node as a running instance (in memory)", async () => {
    const i = await admin.adopt({ nodeName: "node-a", instanceType: "g5.xlarge", zone: "us-west-2c" })
    expect(i).toMatchObject({ state: "running", nodeName: "node-a", zone: "us-west-2c", zoneId: "usw2-az3" })
    expect(i.providerID).toBe(`aws:///us-west-2c/${i.instanceId}`)
    expect(await stateOf(i.instanceId)).toBe("running")
  })

  it("rejects a malformed admin body with a clear message", async () => {
    await expect(admin.injectFault({ kind: "explode" } as never)).rejects.toThrow(/HTTP 400.*kind/s)
  })
})

describe("metrics", () => {
  /** GET /metrics as sample -> value (the HELP and TYPE lines checked, then left out). */
  const scrape = async () => {
    const res = await fetch(`${cloud.url}/metrics`)
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/plain; version=0.0.4"])
    const samples = new Map<string, number>()
    const families = new Set<string>()
    for (const line of (await res.text()).trim().split("\n")) {
      const type = /^# TYPE (\S+) (counter|gauge)$/.exec(line)
      if (type) families.add(type[1]!)
      else if (!line.startsWith("# HELP ")) {
        const m = /^(\S+) (\d+)$/.exec(line)
        expect(m, line).not.toBeNull()
        samples.set(m![1]!, Number(m![2]))
      }
    }
    expect([...families].sort()).toEqual([
      "nodemend_fake_cloud_api_calls_total",
      "nodemend_fake_cloud_faults_pending",
      "nodemend_fake_cloud_instances",
      "nodemend_fake_cloud_zonal_shifts_active"
    ])
    return (name: string) => samples.get(name) ?? 0
  }
  const calls = (api: string, action: string, outcome: string) =>
    `nodemend_fake_cloud_api_calls_total{api="${api}",action="${action}",outcome="${outcome}"}`

  it("counts calls by api, action and outcome; instances by state; active shifts; faults not used up", async () => {
    await admin.cancelAllZonalShifts()
    const before = await scrape()
    await admin.injectFault({ kind: "throttle", target: "ec2", action: "DescribeInstances", count: 2 })
    await admin.injectFault({ kind: "error", target: "arc", count: 3 })
    const pending = await scrape()
    expect(pending('nodemend_fake_cloud_faults_pending{kind="throttle"}')).toBe(2)
    expect(pending('nodemend_fake_cloud_faults_pending{kind="error"}')).toBe(3)
    for (let i = 0; i < 3; i++) await ec2({ Action: "DescribeInstances" })
    await ec2({ Action: "TerminateInstances", "InstanceId.1": "i-0000000000000dead" })
    await arc("GET", `/managedresources/${encodeURIComponent(ARN)}`)
    const id = await launchRunning()
    await admin.startZonalShift({ awayFrom: "us-west-2a", expiresInMinutes: 10 })
    const after = await scrape()
    const delta = (name: string) => after(name) - before(name)
    expect(delta(calls("ec2", "DescribeInstances", "throttled"))).toBe(2)
    expect(delta(calls("ec2", "DescribeInstances", "ok"))).toBeGreaterThanOrEqual(1)
    expect(delta(calls("ec2", "TerminateInstances", "error"))).toBe(1)
    expect(delta(calls("arc", "GetManagedResource", "error"))).toBe(1)
    expect(delta(calls("ec2", "RunInstances", "ok"))).toBe(1)
    expect(after('nodemend_fake_cloud_faults_pending{kind="throttle"}')).toBe(0)
    expect(after('nodemend_fake_cloud_faults_pending{kind="error"}')).toBe(2)
    expect(after('nodemend_fake_cloud_instances{state="running"}')).toBe(
      cloud.store.describe([]).filter((i) => i.state === "running").length
    )
    expect(cloud.store.describe([id])[0]?.state).toBe("running")
    expect(after('nodemend_fake_cloud_zonal_shifts_active{kind="zonal-shift"}')).toBe(
      cloud.shifts.active().length
    )
    expect(delta('nodemend_fake_cloud_zonal_shifts_active{kind="zonal-shift"}')).toBe(1)
    cloud.faults.clear()
    cloud.shifts.cancelAll()
  })
})
