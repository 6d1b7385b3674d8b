/**
 * node-problem-detector v1.36's custom-plugin and health-checker detections (issue #27): ConntrackFull
 * (config/network-problem-monitor.json + config/plugin/network_problem.sh), KubeletUnhealthy
 * (config/health-checker-kubelet.json) and ContainerRuntimeUnhealthy (config/health-checker-containerd.json),
 * as the agent's conntrack, kubelet-health and runtime-health checks.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { Result } from "effect"
import fc from "fast-check"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { buildChecks } from "../../src/checks/registry.ts"
import {
  CONNTRACK_COUNT,
  CONNTRACK_MAX,
  conntrackCheck,
  conntrackFindings,
  conntrackUsage,
  parseSysctlCount
} from "../../src/checks/conntrack.ts"
import {
  type HttpProbe,
  kubeletHealthCheck,
  kubeletHealthzUrl,
  PROBE_INITIAL,
  probeStep,
  runtimeHealthCheck
} from "../../src/checks/health-probes.ts"
import { decodeConfig } from "../../src/config/load.ts"
import { criRuntimeClient } from "../../src/cri/runtime-client.ts"
import {
  decodeStatusResponse,
  encodeStatusResponse,
  type RuntimeCondition,
  runtimeNotReady
} from "../../src/cri/runtime-health.ts"
import { type FakeContainerd, startFakeContainerd } from "../cri/fake-containerd.ts"
import { type HostRoot, makeHostRoot, reasons, runAt } from "./host-root.ts"
import { recordedRunner } from "./recorded-runner.ts"

const MIN = 60_000

describe("conntrack (NPD ConntrackFull)", () => {
  let host: HostRoot
  beforeEach(() => {
    host = makeHostRoot()
  })
  afterEach(() => host.cleanup())

  it("parses sysctl values: one non-negative integer, else nothing", () => {
    expect(parseSysctlCount("262144\n")).toBe(262144)
    expect(parseSysctlCount(" 0 \n")).toBe(0)
    for (const bad of [undefined, "", "-1\n", "1e5\n", "12 34\n", "abc\n"])
      expect(parseSysctlCount(bad)).toBeUndefined()
    fc.assert(
      fc.property(fc.nat(), (n) => parseSysctlCount(`${n}\n`) === n),
      { numRuns: 200 }
    )
    fc.assert(
      fc.property(fc.string(), (s) => {
        const v = parseSysctlCount(s)
        return (
          v === undefined ||
          (Number.isInteger(v) && v >= 0 && s.trim() === String(v).padStart(s.trim().length, "0"))
        )
      }),
      { numRuns: 500 }
    )
  })

  it("fires exactly when count >= threshold% of max (NPD: 90%), never for a zero max", () => {
    fc.assert(
      fc.property(fc.nat({ max: 4_194_304 }), fc.nat({ max: 4_194_304 }), (count, max) => {
        const fs = conntrackFindings(`${count}\n`, `${max}\n`, 90, 0)
        const expected = max > 0 && 100 * count >= 90 * max
        expect(fs.length).toBe(expected ? 1 : 0)
        expect(conntrackUsage(`${count}`, `${max}`) === undefined).toBe(max === 0)
      }),
      { numRuns: 1000 }
    )
  })

  it("reads the host's nf_conntrack_count and _max (EKS AL2023 default max 262144 on 8 GiB+ nodes)", async () => {
    const check = conntrackCheck(host.files, 90, MIN)
    // nf_conntrack not loaded: no files, not watching
    expect(await runAt(check, host.files, 0)).toEqual([])
    host.write(CONNTRACK_MAX, "262144\n")
    host.write(CONNTRACK_COUNT, "235929\n") // 89.99%
    expect(await runAt(check, host.files, 0)).toEqual([])
    host.write(CONNTRACK_COUNT, "235930\n") // 90.00%
    const fs = await runAt(check, host.files, 1000)
    expect(reasons(fs)).toEqual(["+ConntrackTableNearlyFull"])
    expect(fs[0]).toMatchObject({
      severity: "Event",
      conditionType: "KernelReady",
      message: "Connection tracking table is 90.0% full (235930 of 262144 entries)"
    })
    host.write(CONNTRACK_MAX, "0\n")
    expect(await runAt(check, host.files, 2000)).toEqual([])
  })
})

describe("kubelet-health (NPD health-checker-kubelet)", () => {
  let host: HostRoot
  beforeEach(() => {
    host = makeHostRoot()
  })
  afterEach(() => host.cleanup())

  it("the endpoint comes from kubelet's JSON config; healthzPort 0 disables it", () => {
    expect(kubeletHealthzUrl(undefined)).toBe("http://127.0.0.1:10248/healthz")
    expect(kubeletHealthzUrl("not json")).toBe("http://127.0.0.1:10248/healthz")
    // AL2023 nodeadm's /etc/kubernetes/kubelet/config.json carries neither field: kubelet's defaults
    expect(
      kubeletHealthzUrl('{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1"}')
    ).toBe("http://127.0.0.1:10248/healthz")
    expect(kubeletHealthzUrl('{"healthzBindAddress":"0.0.0.0","healthzPort":10248}')).toBe(
      "http://127.0.0.1:10248/healthz"
    )
    expect(kubeletHealthzUrl('{"healthzBindAddress":"::1","healthzPort":10249}')).toBe(
      "http://[::1]:10249/healthz"
    )
    expect(kubeletHealthzUrl('{"healthzPort":0}')).toBeUndefined()
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 65535 }), (port) =>
        kubeletHealthzUrl(JSON.stringify({ healthzPort: port }))?.endsWith(`:${port}/healthz`)
      ),
      { numRuns: 200 }
    )
  })

  it("3 failed probes in a row raise the Condition; a pass resolves it; a pass in between starts over", () => {
    let m = PROBE_INITIAL
    const step = (ok: boolean, at: number) => {
      const r = probeStep(
        m,
        ok ? { _tag: "Healthy" } : { _tag: "Unhealthy", detail: "x" },
        "KubeletUnhealthy",
        3,
        at
      )
      m = r.memory
      return reasons(r.findings)
    }
    expect(step(false, 0)).toEqual([])
    expect(step(false, MIN)).toEqual([])
    expect(step(true, 2 * MIN)).toEqual([])
    expect(step(false, 3 * MIN)).toEqual([])
    expect(step(false, 4 * MIN)).toEqual([])
    expect(step(false, 5 * MIN)).toEqual(["+KubeletUnhealthy"])
    expect(step(false, 6 * MIN)).toEqual(["+KubeletUnhealthy"])
    expect(step(true, 7 * MIN)).toEqual(["-KubeletUnhealthy"])
    expect(step(true, 8 * MIN)).toEqual([])
  })

  it("a host without kubelet (no config, no process) is not watched: nothing, and no probe", async () => {
    const calls: string[] = []
    const probe: HttpProbe = async (url) => {
      calls.push(url)
      throw new Error("connect ECONNREFUSED 127.0.0.1:10248")
    }
    const check = kubeletHealthCheck(host.files, 3, MIN, probe)
    for (let i = 0; i < 5; i++) expect(await runAt(check, host.files, i * MIN)).toEqual([])
    expect(calls).toEqual([])
  })

  it("a kubelet process makes it watch; a kubelet that then dies keeps failing until it answers ok", async () => {
    let answer: () => Promise<string | undefined> = async () => "ok"
    const probe: HttpProbe = () => answer()
    const check = kubeletHealthCheck(host.files, 3, MIN, probe)
    host.write("proc/4242/comm", "kubelet\n")
    expect(await runAt(check, host.files, 0)).toEqual([])
    host.remove("proc/4242")
    answer = async () => {
      throw new Error("connect ECONNREFUSED 127.0.0.1:10248")
    }
    expect(await runAt(check, host.files, MIN)).toEqual([])
    expect(await runAt(check, host.files, 2 * MIN)).toEqual([])
    const fs = await runAt(check, host.files, 3 * MIN)
    expect(reasons(fs)).toEqual(["+KubeletUnhealthy"])
    expect(fs[0]).toMatchObject({
      severity: "Condition",
      conditionType: "ContainerRuntimeReady",
      message:
        "kubelet health check failed 3 times in a row: GET http://127.0.0.1:10248/healthz: connect ECONNREFUSED 127.0.0.1:10248"
    })
    answer = async () => "ok"
    expect(reasons(await runAt(check, host.files, 4 * MIN))).toEqual(["-KubeletUnhealthy"])
  })

  describe("against a real HTTP server standing in for kubelet's healthz", () => {
    let server: Server
    let status = 200
    // kubelet's healthz handler (k8s.io/apiserver pkg/server/healthz) answers 200 "ok", or 500 with
    // "[-]syncloop failed: reason withheld\nhealthz check failed" when a check fails.
    let body = "ok"
    beforeEach(async () => {
      server = createServer((_req, res) => {
        res.writeHead(status, { "content-type": "text/plain; charset=utf-8" })
        res.end(body)
      })
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    })
    afterEach(async () => {
      await new Promise<void>((r) => server.close(() => r()))
    })

    it("ok, a 500 from a failing syncloop check, and a closed port", async () => {
      const port = (server.address() as AddressInfo).port
      host.write(
        "etc/kubernetes/kubelet/kubelet-config.json",
        JSON.stringify({ kind: "KubeletConfiguration", healthzBindAddress: "127.0.0.1", healthzPort: port })
      )
      const check = kubeletHealthCheck(host.files, 2, MIN)
      expect(await runAt(check, host.files, 0)).toEqual([])
      status = 500
      body = "[+]ping ok\n[-]syncloop failed: reason withheld\nhealthz check failed\n"
      expect(await runAt(check, host.files, MIN)).toEqual([])
      const fs = await runAt(check, host.files, 2 * MIN)
      expect(reasons(fs)).toEqual(["+KubeletUnhealthy"])
      expect(fs[0]?._tag === "Detection" && fs[0].message).toBe(
        `kubelet health check failed 2 times in a row: GET http://127.0.0.1:${port}/healthz answered with an error status`
      )
      status = 200
      body = "ok"
      expect(reasons(await runAt(check, host.files, 3 * MIN))).toEqual(["-KubeletUnhealthy"])
      await new Promise<void>((r) => server.close(() => r()))
      server = createServer()
      expect(await runAt(check, host.files, 4 * MIN)).toEqual([])
      const down = await runAt(check, host.files, 5 * MIN)
      expect(reasons(down)).toEqual(["+KubeletUnhealthy"])
      expect(down[0]?._tag === "Detection" && down[0].message).toMatch(/ECONNREFUSED/)
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    })
  })
})

describe("runtime-health (NPD health-checker-containerd) against a gRPC containerd double", () => {
  let host: HostRoot
  let containerd: FakeContainerd | undefined
  const socketPath = () => join(host.root, "run/containerd/containerd.sock")
  beforeEach(() => {
    host = makeHostRoot()
  })
  afterEach(async () => {
    await containerd?.close()
    containerd = undefined
    host.cleanup()
  })
  const check = () => runtimeHealthCheck(host.files, criRuntimeClient(socketPath(), 1_000), 3, MIN)

  it("decodes Status: RuntimeReady false is unhealthy, NetworkReady false is not its business", () => {
    // containerd before a CNI config exists (its cri plugin's Status; `crictl info` prints the same)
    const boot: RuntimeCondition[] = [
      { type: "RuntimeReady", status: true, reason: "", message: "" },
      {
        type: "NetworkReady",
        status: false,
        reason: "NetworkPluginNotReady",
        message: "Network plugin returns error: cni plugin not initialized"
      }
    ]
    expect(decodeStatusResponse(encodeStatusResponse(boot))).toEqual(boot)
    expect(runtimeNotReady(boot)).toBeUndefined()
    expect(
      runtimeNotReady([{ type: "RuntimeReady", status: false, reason: "Down", message: "runc gone" }])
    ).toBe("RuntimeReady is false (Down: runc gone)")
    expect(runtimeNotReady([])).toBeUndefined()
    const cond = fc.record({
      type: fc.string(),
      status: fc.boolean(),
      reason: fc.string(),
      message: fc.string()
    })
    fc.assert(
      fc.property(fc.array(cond, { maxLength: 5 }), (cs) => {
        expect(decodeStatusResponse(encodeStatusResponse(cs))).toEqual(cs)
      }),
      { numRuns: 300 }
    )
  })

  it("no socket ever: not watched", async () => {
    const c = check()
    for (let i = 0; i < 4; i++) expect(await runAt(c, host.files, i * MIN)).toEqual([])
  })

  it("healthy, then failing calls, RuntimeReady false, a vanished socket; each recovery resolves", async () => {
    containerd = await startFakeContainerd(socketPath())
    const c = check()
    expect(await runAt(c, host.files, 0)).toEqual([])
    expect(containerd.methods).toEqual([
      "/runtime.v1.RuntimeService/Status",
      "/runtime.v1.RuntimeService/ListPodSandbox"
    ])
    containerd.healthStatus = 14
    expect(await runAt(c, host.files, MIN)).toEqual([])
    expect(await runAt(c, host.files, 2 * MIN)).toEqual([])
    const fs = await runAt(c, host.files, 3 * MIN)
    expect(reasons(fs)).toEqual(["+ContainerRuntimeUnhealthy"])
    expect(fs[0]).toMatchObject({ severity: "Condition", conditionType: "ContainerRuntimeReady" })
    expect(fs[0]?._tag === "Detection" && fs[0].message).toMatch(
      /^Container runtime health check failed 3 times in a row: .*Status/
    )
    containerd.healthStatus = 0
    expect(reasons(await runAt(c, host.files, 4 * MIN))).toEqual(["-ContainerRuntimeUnhealthy"])

    containerd.runtimeConditions = [
      { type: "RuntimeReady", status: false, reason: "Down", message: "runc gone" }
    ]
    for (const i of [5, 6]) expect(await runAt(c, host.files, i * MIN)).toEqual([])
    const nr = await runAt(c, host.files, 7 * MIN)
    expect(nr[0]?._tag === "Detection" && nr[0].message).toBe(
      "Container runtime health check failed 3 times in a row: RuntimeReady is false (Down: runc gone)"
    )
    containerd.runtimeConditions = [{ type: "RuntimeReady", status: true, reason: "", message: "" }]
    expect(reasons(await runAt(c, host.files, 8 * MIN))).toEqual(["-ContainerRuntimeUnhealthy"])

    await containerd.close()
    containerd = undefined
    for (const i of [9, 10]) expect(await runAt(c, host.files, i * MIN)).toEqual([])
    const gone = await runAt(c, host.files, 11 * MIN)
    expect(gone[0]?._tag === "Detection" && gone[0].message).toBe(
      "Container runtime health check failed 3 times in a row: no CRI socket at /run/containerd/containerd.sock"
    )
  })

  it("the registry schedules conntrack, kubelet-health and runtime-health every minute", () => {
    const config = decodeConfig({})
    if (Result.isFailure(config)) throw new Error(config.failure.message)
    const names = buildChecks(
      config.success,
      host.files,
      recordedRunner(() => "missing")
    ).map((c) => `${c.name}/${c.monitor}/${c.intervalMs}`)
    expect(names).toEqual(
      expect.arrayContaining([
        "conntrack/kernel/60000",
        "kubelet-health/container-runtime/60000",
        "runtime-health/container-runtime/60000"
      ])
    )
  })
})
