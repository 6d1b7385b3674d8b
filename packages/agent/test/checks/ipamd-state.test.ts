import { Effect } from "effect"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import {
  decodeIpamCheckpoint,
  inconsistentAllocations,
  ipamdStateCheck
} from "../../src/checks/ipamd-state.ts"
import { criRuntimeClient } from "../../src/cri/runtime-client.ts"
import { type FakeContainerd, sandbox, startFakeContainerd } from "../cri/fake-containerd.ts"
import { makeHostRoot, reasons, runAt, type HostRoot } from "./host-root.ts"

const MIN = 60_000

// /var/run/aws-node/ipam.json as IPAMD writes it: datastore.CheckpointData marshalled by encoding/json
// (aws/amazon-vpc-cni-k8s pkg/ipamd/datastore/data_store.go; IPAMKey embedded, ipv4/ipv6 omitempty).
const checkpoint = (allocations: readonly object[]) =>
  JSON.stringify({ version: "vpc-cni-ipam/1", allocations })
const alloc = (containerID: string, ipv4: string, namespace: string, name: string) => ({
  networkName: "aws-cni",
  containerID,
  ifName: "eth0",
  ipv4,
  allocationTimestamp: 1764480000000000000,
  metadata: { k8sPodNamespace: namespace, k8sPodName: name }
})

describe("ipam.json decoding", () => {
  it("reads allocations, IPv4 or IPv6, with their pod", () => {
    const text = checkpoint([
      alloc("aaa", "10.0.1.5", "default", "web-0"),
      {
        networkName: "aws-cni",
        containerID: "bbb",
        ifName: "eth0",
        ipv6: "2001:db8::7",
        allocationTimestamp: 1,
        metadata: {}
      }
    ])
    expect(decodeIpamCheckpoint(text)).toEqual({
      _tag: "Allocations",
      allocations: [
        { containerID: "aaa", ip: "10.0.1.5", namespace: "default", name: "web-0" },
        { containerID: "bbb", ip: "2001:db8::7", namespace: "", name: "" }
      ]
    })
    expect(decodeIpamCheckpoint(JSON.stringify({ version: "vpc-cni-ipam/1", allocations: null }))).toEqual({
      _tag: "Allocations",
      allocations: []
    })
  })

  it("refuses an unknown version, a non-checkpoint and broken JSON", () => {
    expect(decodeIpamCheckpoint(JSON.stringify({ version: "vpc-cni-ipam/2", allocations: [] }))._tag).toBe(
      "Unreadable"
    )
    expect(decodeIpamCheckpoint(JSON.stringify({ allocations: [] }))._tag).toBe("Unreadable")
    expect(
      decodeIpamCheckpoint(JSON.stringify({ version: "vpc-cni-ipam/1", allocations: [{ ipv4: 1 }] }))._tag
    ).toBe("Unreadable")
    expect(decodeIpamCheckpoint("{")._tag).toBe("Unreadable")
  })

  it("decision: a sandbox without the allocation's address is a conflict; unknown or IP-less sandboxes are not", () => {
    const allocations = [
      { containerID: "a", ip: "10.0.1.5", namespace: "default", name: "ok" },
      { containerID: "b", ip: "10.0.1.6", namespace: "default", name: "bad" },
      { containerID: "c", ip: "10.0.1.7", namespace: "default", name: "gone" },
      { containerID: "d", ip: "10.0.1.8", namespace: "default", name: "no-ip" },
      { containerID: "e", ip: "2001:DB8::1", namespace: "", name: "" },
      // a multi-NIC pod: one allocation per interface; the runtime reports only eth0's address
      { containerID: "f", ip: "10.0.1.10", namespace: "ml", name: "multi-nic" },
      { containerID: "f", ip: "10.0.2.10", namespace: "ml", name: "multi-nic" },
      // a multi-NIC pod whose runtime IP matches none of its allocations is still a conflict
      { containerID: "g", ip: "10.0.1.11", namespace: "ml", name: "multi-bad" },
      { containerID: "g", ip: "10.0.2.11", namespace: "ml", name: "multi-bad" }
    ]
    const sandboxes = new Map([
      ["a", { ips: ["10.0.1.5"], namespace: "default", name: "ok" }],
      ["b", { ips: ["10.0.1.99"], namespace: "default", name: "bad" }],
      ["d", { ips: [], namespace: "default", name: "no-ip" }],
      ["e", { ips: ["10.0.9.9", "2001:db8::1"], namespace: "kube-system", name: "dual" }],
      ["f", { ips: ["10.0.1.10"], namespace: "ml", name: "multi-nic" }],
      ["g", { ips: ["10.0.3.3"], namespace: "ml", name: "multi-bad" }]
    ])
    const fs = inconsistentAllocations(allocations, sandboxes, 0)
    expect(reasons(fs)).toEqual([
      "+IPAMDInconsistentState@default/bad",
      "+IPAMDInconsistentState@ml/multi-bad"
    ])
    expect(fs[0]).toMatchObject({
      message: "Internal IPAMD state has conflicting IP addresses for pod default/bad",
      severity: "Event",
      conditionType: "NetworkingReady"
    })
  })
})

describe("ipamd-state against a gRPC containerd double on a unix socket", () => {
  let host: HostRoot
  let containerd: FakeContainerd | undefined
  const socketPath = () => join(host.root, "run/containerd/containerd.sock")

  beforeEach(async () => {
    host = makeHostRoot()
    host.mkdir("var/log/pods/kube-system_aws-node-x1_0f0f/aws-vpc-cni-init")
    host.write("proc/77/comm", "aws-k8s-agent\n")
    host.write(
      "var/run/aws-node/ipam.json",
      checkpoint([
        alloc("s-web", "10.0.1.5", "default", "web-0"),
        alloc("s-api", "10.0.1.6", "prod", "api-0")
      ])
    )
    containerd = await startFakeContainerd(socketPath())
  })
  afterEach(async () => {
    await containerd?.close()
    host.cleanup()
  })

  const check = (timeoutMs = 2_000, ttlMs?: number) =>
    ipamdStateCheck(host.files, criRuntimeClient(socketPath(), timeoutMs), 5 * MIN, ttlMs)

  it("matching IPs: nothing; a mismatch: an Event naming the pod", async () => {
    containerd!.sandboxes.set("s-web", sandbox("s-web", "default", "web-0", "10.0.1.5"))
    containerd!.sandboxes.set("s-api", sandbox("s-api", "prod", "api-0", "10.0.1.77"))
    const fs = await runAt(check(), host.files, 0)
    expect(reasons(fs)).toEqual(["+IPAMDInconsistentState@prod/api-0"])
    expect([...containerd!.requests].sort()).toEqual(["s-api", "s-web"])
  })

  it("answers are cached for 2 h per sandbox", async () => {
    containerd!.sandboxes.set("s-web", sandbox("s-web", "default", "web-0", "10.0.1.5"))
    containerd!.sandboxes.set("s-api", sandbox("s-api", "prod", "api-0", "10.0.1.6"))
    const c = check()
    expect(await runAt(c, host.files, 0)).toEqual([])
    // The runtime now disagrees, but the cached answer holds until it expires.
    containerd!.sandboxes.set("s-api", sandbox("s-api", "prod", "api-0", "10.0.1.77"))
    expect(await runAt(c, host.files, 5 * MIN)).toEqual([])
    expect(containerd!.requests).toHaveLength(2)
    expect(reasons(await runAt(c, host.files, 121 * MIN))).toEqual(["+IPAMDInconsistentState@prod/api-0"])
    expect(containerd!.requests).toHaveLength(4)
  })

  it("an unknown sandbox (NOT_FOUND) is skipped, not a fault, and the other allocations are still checked", async () => {
    containerd!.sandboxes.set("s-api", sandbox("s-api", "prod", "api-0", "10.0.1.77"))
    const fs = await runAt(check(), host.files, 0)
    expect(reasons(fs)).toEqual(["+IPAMDInconsistentState@prod/api-0"])
    expect([...containerd!.requests].sort()).toEqual(["s-api", "s-web"])
  })

  it("no runtime socket: not watching, no finding and no call", async () => {
    await containerd!.close()
    containerd = undefined
    expect(await runAt(check(), host.files, 0)).toEqual([])
  })

  it("a socket nobody listens on: skipped this run (typed GrpcUnavailable), no finding", async () => {
    await containerd!.close()
    containerd = undefined
    host.write("run/containerd/containerd.sock", "") // a stale path, not a listening socket
    expect(await runAt(check(), host.files, 0)).toEqual([])
    const failure = await Effect.runPromise(
      criRuntimeClient(socketPath(), 1_000).podSandboxStatuses(["x"]).pipe(Effect.flip)
    )
    expect(failure._tag).toBe("GrpcUnavailable")
  })

  it("a runtime that does not answer in time: GrpcTimeout, no finding", async () => {
    containerd!.sandboxes.set("s-api", sandbox("s-api", "prod", "api-0", "10.0.1.77"))
    containerd!.delayMs = 5_000
    const failure = await Effect.runPromise(
      criRuntimeClient(socketPath(), 200).podSandboxStatuses(["s-api"]).pipe(Effect.flip)
    )
    expect(failure._tag).toBe("GrpcTimeout")
    expect(await runAt(check(200), host.files, 0)).toEqual([])
  })

  it("a batch of calls is bounded as a whole (the check shares the scheduler's queue)", async () => {
    for (let i = 0; i < 20; i++)
      containerd!.sandboxes.set(`s${i}`, sandbox(`s${i}`, "default", `p${i}`, `10.0.3.${i}`))
    containerd!.delayMs = 150
    const ids = Array.from({ length: 20 }, (_, i) => `s${i}`)
    const all = await Effect.runPromise(criRuntimeClient(socketPath(), 1_000, 5_000).podSandboxStatuses(ids))
    expect([...all.keys()]).toEqual(ids)
    const failure = await Effect.runPromise(
      criRuntimeClient(socketPath(), 1_000, 200).podSandboxStatuses(ids).pipe(Effect.flip)
    )
    expect(failure).toMatchObject({ _tag: "GrpcTimeout", timeoutMs: 200 })
  })

  it("IPAMD not running, no VPC CNI or no checkpoint: nothing is asked", async () => {
    containerd!.sandboxes.set("s-api", sandbox("s-api", "prod", "api-0", "10.0.1.77"))
    host.remove("proc/77")
    expect(await runAt(check(), host.files, 0)).toEqual([])
    host.write("proc/77/comm", "aws-k8s-agent\n")
    host.remove("var/run/aws-node/ipam.json")
    expect(await runAt(check(), host.files, 0)).toEqual([])
    expect(containerd!.requests).toEqual([])
    // /run/aws-node/ipam.json is read when /var/run is not a link to it
    host.write("run/aws-node/ipam.json", checkpoint([alloc("s-api", "10.0.1.6", "prod", "api-0")]))
    expect(reasons(await runAt(check(), host.files, 0))).toEqual(["+IPAMDInconsistentState@prod/api-0"])
  })
})
