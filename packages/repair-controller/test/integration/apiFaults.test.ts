/**
 * The lean client and the controller under API faults, against the real local API server: an expired continue
 * token on the pod list (answered by a fault proxy, the pages themselves come from the API server), an API
 * server unreachable at start, and a Lease taken from the leader by hand.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CoordinationV1Api, V1MicroTime } from "@kubernetes/client-node"
import {
  clients,
  createFakeNode,
  createTestNamespace,
  createTestPod,
  deleteNamespace,
  deleteRunNodes,
  uniqueName,
  waitFor
} from "@nodemend/cluster-harness"
import { Effect, Fiber } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { parse, stringify } from "yaml"
import {
  acquireLeadership,
  holdLeadership,
  type LeadershipEnd,
  type LeaseOptions
} from "../../src/controller/LeaderElection.ts"
import { loadKubeAccess, makeKube } from "../../src/kube/Kube.ts"
import { CONTROLLER_CONNECTIONS } from "../../src/kube/KubeHttp.ts"
import { ListExpired, MAX_LIST_RESTARTS } from "@nodemend/kube-access"
import {
  type ControllerProcess,
  freePort,
  killControllers,
  startControllerProcess
} from "./controllerProcess.ts"
import { type FaultProxy, startFaultProxy, startTcpRelay } from "./faultProxy.ts"
import { createPool, scenario, testConfig } from "./helpers.ts"

const c = clients()
const { core } = c
const kubeconfig = process.env.NODEMEND_KUBECONFIG ?? ""
const real = loadKubeAccess(kubeconfig).access
let ns = ""
const cleanups: Array<() => Promise<void>> = []
const running: ControllerProcess[] = []

const EXPIRED = {
  kind: "Status",
  apiVersion: "v1",
  metadata: {},
  status: "Failure",
  message: "The provided continue parameter is too old to display a consistent list result.",
  reason: "Expired",
  code: 410
}

beforeAll(async () => {
  ns = await createTestNamespace(core, "faults")
})
afterEach(async (ctx) => {
  await killControllers(running, ctx.task.result?.state === "fail")
  for (const f of cleanups.splice(0)) await f()
})
afterAll(async () => {
  await deleteRunNodes(core)
  await deleteNamespace(core, ns)
})

describe("pod list with an expired continue token", () => {
  const podsOnNewNode = async (count: number) => {
    const node = await createFakeNode(core, { name: uniqueName("faults-node") })
    const name = node.metadata?.name ?? ""
    const pods = await Promise.all(
      Array.from({ length: count }, () => createTestPod(core, ns, { bindTo: name }))
    )
    return { node: name, pods: pods.map((p) => p.metadata?.name ?? "").sort() }
  }
  const proxied = async (fault: Parameters<typeof startFaultProxy>[1]): Promise<FaultProxy> => {
    const p = await startFaultProxy(real, fault)
    cleanups.push(p.close)
    return p
  }
  const isContinue = (url: string | undefined) => new URL(url ?? "", "https://x").searchParams.has("continue")

  it("a 410 on a continue page restarts the list from the first page and returns every pod once", async () => {
    const { node, pods } = await podsOnNewNode(5)
    let failed = false
    const proxy = await proxied((req) => {
      if (failed || !isContinue(req.url)) return undefined
      failed = true
      return { status: 410, body: EXPIRED }
    })
    // Two pods a page: 5 pods take 3 pages, so the list needs continue tokens.
    const kube = makeKube(proxy.access, "faults-test", 2)
    const listed = await Effect.runPromise(kube.listPodsOnNode(node))
    expect(listed.map((p) => p.metadata?.name ?? "").sort()).toEqual(pods)
    const podLists = proxy.requests.filter((r) => r.startsWith("/api/v1/pods?"))
    // first page, continue (410), then a fresh first page and its two continues
    expect(podLists.map(isContinue)).toEqual([false, true, false, true, true])
  })

  it("a continue token that expires on every fresh list too ends in ListExpired, after bounded restarts", async () => {
    const { node } = await podsOnNewNode(3)
    const proxy = await proxied((req) => (isContinue(req.url) ? { status: 410, body: EXPIRED } : undefined))
    const kube = makeKube(proxy.access, "faults-test", 2)
    const error = await Effect.runPromise(Effect.flip(kube.listPodsOnNode(node)))
    expect(error).toBeInstanceOf(ListExpired)
    const firstPages = proxy.requests.filter((r) => r.startsWith("/api/v1/pods?") && !isContinue(r))
    expect(firstPages).toHaveLength(1 + MAX_LIST_RESTARTS)
  })
})

describe("controller start with the API server unreachable", () => {
  it("retries the first Node list while /readyz stays 503, then syncs once the API server is reachable", async () => {
    const s = scenario("unreach")
    await createPool(core, s, 2)
    // A kubeconfig whose server is a port nothing listens on yet; the relay opens it later.
    const port = await freePort()
    const kc = parse(readFileSync(kubeconfig, "utf8")) as {
      clusters: Array<{ cluster: { server: string } }>
    }
    for (const cl of kc.clusters) cl.cluster.server = `https://127.0.0.1:${port}`
    const path = join(mkdtempSync(join(tmpdir(), "nodemend-unreach-")), "kubeconfig")
    writeFileSync(path, stringify(kc))

    const ctl = await startControllerProcess(path, testConfig(ns, s, { leaderElection: { enabled: false } }))
    running.push(ctl)
    await waitFor(
      "two failed initial node lists",
      async () => (ctl.logs().split("initial node list failed; retrying").length > 2 ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 200 }
    )
    expect(ctl.proc.exitCode).toBeNull()
    expect((await ctl.get("/readyz")).status).toBe(503)
    expect((await ctl.get("/metrics")).body).toMatch(
      /nodemend_controller_initial_node_list_failures_total\{code="none"\} [1-9]/
    )

    const closeRelay = await startTcpRelay(port, real.server)
    cleanups.push(closeRelay)
    // Backoff is capped at 30 s (1, 2, 4, 8, 16 s... jittered): within one cap of the relay opening.
    const ready = await waitFor(
      "/readyz 200",
      async () => {
        const r = await ctl.get("/readyz")
        return r.status === 200 ? r.body : undefined
      },
      { timeoutMs: 45_000, intervalMs: 250 }
    )
    expect(ready).toBe("synced")
    expect(ctl.logs()).toMatch(/controller started.*"nodes":2/)
    // The journals of repairs in flight were read once the API server answered, not given up on.
    expect(ctl.logs()).not.toMatch(/could not read repair journals/)
  })
})

describe("leader election against the real API server", () => {
  it("a leader whose Lease is overwritten by hand steps down at its next renewal, long before its renew deadline", async () => {
    const kube = makeKube(real, "faults-elector")
    // A 60 s lease: the renew deadline (48 s) is far beyond the step-down this test waits for.
    const options = (identity: string): LeaseOptions => ({
      namespace: ns,
      name: uniqueName("lease"),
      identity,
      leaseDurationSeconds: 60,
      renewIntervalSeconds: 1
    })
    const a = options("elector-a")
    const b: LeaseOptions = { ...options("elector-b"), name: a.name }
    const lockA = await Effect.runPromise(acquireLeadership(kube, a))
    const holdA = Effect.runFork(holdLeadership(lockA, a))
    // b stands by: a's lease is fresh for 60 s.
    const acquireB = Effect.runFork(acquireLeadership(kube, b))
    cleanups.push(() => Effect.runPromise(Fiber.interrupt(acquireB)).then(() => undefined))
    cleanups.push(() => Effect.runPromise(Fiber.interrupt(holdA)).then(() => undefined))

    // By hand, as `kubectl edit` would: the Lease now names b, freshly renewed.
    const coord = c.kc.makeApiClient(CoordinationV1Api)
    const lease = await coord.readNamespacedLease({ name: a.name, namespace: ns })
    expect(lease.spec?.holderIdentity).toBe("elector-a")
    await coord.replaceNamespacedLease({
      name: a.name,
      namespace: ns,
      body: { ...lease, spec: { ...lease.spec, holderIdentity: "elector-b", renewTime: new V1MicroTime() } }
    })

    const end = await waitFor(
      "elector-a steps down",
      async () => {
        const exit = holdA.pollUnsafe()
        return exit === undefined ? undefined : exit
      },
      { timeoutMs: 20_000, intervalMs: 100 }
    )
    expect(end._tag).toBe("Success")
    expect((end as { value: LeadershipEnd }).value).toEqual({ _tag: "Superseded", holder: "elector-b" })
    // b renews the lease it now holds; a wrote nothing after stepping down.
    await Effect.runPromise(Fiber.join(acquireB))
    const after = await coord.readNamespacedLease({ name: a.name, namespace: ns })
    expect(after.spec?.holderIdentity).toBe("elector-b")
  })

  it("answers a Lease read while every pooled connection is held by other requests", async () => {
    const kube = makeKube(real, "faults-busy")
    const options: LeaseOptions = {
      namespace: ns,
      name: uniqueName("lease"),
      identity: "busy-elector",
      leaseDurationSeconds: 60,
      renewIntervalSeconds: 1
    }
    await Effect.runPromise(acquireLeadership(kube, options))
    // Every pooled connection held by a watch that the API server ends after 60 s; each sees the namespace's
    // kube-root-ca.crt at once, so a watch that has seen it holds its connection.
    const watching = new Set<number>()
    const watches = Effect.runFork(
      Effect.forEach(
        Array.from({ length: CONTROLLER_CONNECTIONS }, (_, i) => i),
        (i) =>
          kube.http.watch(
            "busyWatch",
            `/api/v1/namespaces/${ns}/configmaps?watch=1&timeoutSeconds=60`,
            () => watching.add(i),
            90_000
          ),
        { concurrency: "unbounded", discard: true }
      )
    )
    cleanups.push(() => Effect.runPromise(Fiber.interrupt(watches)).then(() => kube.http.close()))
    await waitFor("every pooled connection watching", async () =>
      watching.size === CONTROLLER_CONNECTIONS ? true : undefined
    )
    // The pool is full: a pooled request waits for a connection.
    let pooledAnswered = false
    void Effect.runPromise(kube.readConfigMap(ns, "kube-root-ca.crt")).then(() => {
      pooledAnswered = true
    })
    const t = Date.now()
    const lease = await Effect.runPromise(kube.readLease(ns, options.name))
    const tookMs = Date.now() - t
    expect(lease.spec?.holderIdentity).toBe("busy-elector")
    expect(tookMs).toBeLessThan(5_000)
    expect(pooledAnswered).toBe(false)
  })
})
