/**
 * IPAMDInconsistentState (reference 2.5). Only while IPAMD runs (VPC CNI installed and an
 * `aws-k8s-agent` process, as the ipamd check decides). For every allocation in IPAMD's checkpoint
 * (`/var/run/aws-node/ipam.json`, or `/run/aws-node/ipam.json`), the container runtime's
 * PodSandboxStatus(containerID) must report the allocation's IPv4 or IPv6 address; a sandbox whose IPs
 * do not include it is reported for the allocation's pod. The runtime's answer is cached per sandbox
 * for 2 h (a sandbox keeps its IPs for its whole life), so a steady node costs no CRI call per run.
 *
 * Not a fault: a sandbox the runtime does not know (NOT_FOUND: IPAMD has not yet released a deleted
 * pod's IP), a sandbox with no IP (not ready, torn down). Not watching (no finding at all): no VPC CNI,
 * IPAMD not running, no checkpoint, an unknown checkpoint version, no runtime socket, runtime unreachable.
 *
 * The checkpoint is the VPC CNI's `datastore.CheckpointData` (aws/amazon-vpc-cni-k8s
 * pkg/ipamd/datastore/data_store.go): `{"version":"vpc-cni-ipam/1","allocations":[{"networkName",
 * "containerID","ifName","ipv4","ipv6","allocationTimestamp","metadata":{"k8sPodNamespace","k8sPodName"}}]}`
 * (IPAMKey's fields are embedded, so they sit at the top level of each allocation).
 */
import { Effect, Schema } from "effect"
import { CONTAINERD_SOCKET, type CriRuntimeClient } from "../cri/runtime-client.ts"
import { type PodSandboxStatus, sandboxIps } from "../cri/pod-sandbox-status.ts"
import type { Finding } from "../model.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { detection } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"
import { ipamdRunning, vpcCniInstalled } from "./ipamd.ts"

export const IPAM_CHECKPOINT_PATHS = ["var/run/aws-node/ipam.json", "run/aws-node/ipam.json"] as const
export const IPAM_CHECKPOINT_VERSION = "vpc-cni-ipam/1"
export const SANDBOX_CACHE_TTL_MS = 2 * 60 * 60_000

const OptionalString = Schema.optional(Schema.NullOr(Schema.String))
const CheckpointEntry = Schema.Struct({
  containerID: Schema.String,
  networkName: OptionalString,
  ifName: OptionalString,
  ipv4: OptionalString,
  ipv6: OptionalString,
  metadata: Schema.optional(
    Schema.NullOr(Schema.Struct({ k8sPodNamespace: OptionalString, k8sPodName: OptionalString }))
  )
})
const CheckpointData = Schema.Struct({
  version: Schema.String,
  allocations: Schema.optional(Schema.NullOr(Schema.Array(CheckpointEntry)))
})

export interface IpamAllocation {
  readonly containerID: string
  /** The allocation's address: its IPv4, or its IPv6 on an IPv6 cluster. */
  readonly ip: string
  readonly namespace: string
  readonly name: string
}

export type CheckpointReading =
  | { readonly _tag: "Allocations"; readonly allocations: readonly IpamAllocation[] }
  | { readonly _tag: "Unreadable"; readonly detail: string }

/** Decodes ipam.json; an unknown version is unreadable (its fields may mean something else). */
export const decodeIpamCheckpoint = (text: string): CheckpointReading => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (e) {
    return { _tag: "Unreadable", detail: `not JSON: ${(e as Error).message}` }
  }
  const decoded = Schema.decodeUnknownResult(CheckpointData)(parsed)
  if (decoded._tag === "Failure") return { _tag: "Unreadable", detail: String(decoded.failure) }
  const data = decoded.success
  if (data.version !== IPAM_CHECKPOINT_VERSION)
    return { _tag: "Unreadable", detail: `checkpoint version ${JSON.stringify(data.version)}` }
  const allocations: IpamAllocation[] = []
  for (const a of data.allocations ?? []) {
    const ip = a.ipv4 || a.ipv6 || ""
    if (a.containerID === "" || ip === "") continue
    allocations.push({
      containerID: a.containerID,
      ip,
      namespace: a.metadata?.k8sPodNamespace ?? "",
      name: a.metadata?.k8sPodName ?? ""
    })
  }
  return { _tag: "Allocations", allocations }
}

/** What the runtime said about one sandbox, kept for the cache. */
export interface SandboxIps {
  readonly ips: readonly string[]
  readonly namespace: string
  readonly name: string
}

export const sandboxIpsOf = (s: PodSandboxStatus): SandboxIps => ({
  ips: sandboxIps(s),
  namespace: s.metadata?.namespace ?? "",
  name: s.metadata?.name ?? ""
})

/** `10.0.1.5`, `10.0.1.5/32` and `2001:DB8::1` vs `2001:db8::1` name the same address. */
const sameAddress = (a: string, b: string) =>
  a.replace(/\/(32|128)$/, "").toLowerCase() === b.replace(/\/(32|128)$/, "").toLowerCase()

/**
 * The decision: one finding per pod whose sandbox IPs include none of its allocations' addresses.
 * A pod with several allocations (multi-NIC pods get one per interface) is consistent when any of them is
 * among the sandbox's IPs: the runtime reports only the default interface's addresses (containerd takes
 * the CNI result's `eth0`), so a secondary interface's address is never there and is no conflict.
 * Sandboxes the runtime does not know (absent from `sandboxes`) and sandboxes without IPs are skipped.
 */
export const inconsistentAllocations = (
  allocations: readonly IpamAllocation[],
  sandboxes: ReadonlyMap<string, SandboxIps>,
  nowMs: number
): Finding[] => {
  const consistent = new Set<string>()
  for (const a of allocations) {
    if (sandboxes.get(a.containerID)?.ips.some((ip) => sameAddress(ip, a.ip))) consistent.add(a.containerID)
  }
  const out: Finding[] = []
  const seen = new Set<string>()
  for (const a of allocations) {
    const s = sandboxes.get(a.containerID)
    if (s === undefined || s.ips.length === 0 || consistent.has(a.containerID)) continue
    const pod = `${a.namespace || s.namespace}/${a.name || s.name}`
    if (seen.has(pod)) continue
    seen.add(pod)
    out.push(
      detection(
        "IPAMDInconsistentState",
        `Internal IPAMD state has conflicting IP addresses for pod ${pod}`,
        nowMs,
        pod
      )
    )
  }
  return out
}

const readCheckpoint = (files: HostFiles): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    for (const p of IPAM_CHECKPOINT_PATHS) {
      const text = yield* files.text(p)
      if (text !== undefined) return text
    }
    return undefined
  })

export const ipamdStateCheck = (
  files: HostFiles,
  cri: CriRuntimeClient,
  intervalMs: number,
  cacheTtlMs: number = SANDBOX_CACHE_TTL_MS
): PeriodicCheck => {
  const cache = new Map<string, SandboxIps & { readonly expiresAtMs: number }>()
  return {
    name: "ipamd-state",
    monitor: "networking",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const now = tick.nowMs
        if (!(yield* vpcCniInstalled(files))) return [] as Finding[]
        if (!(yield* ipamdRunning(files, yield* tick.pids))) return [] as Finding[]
        const text = yield* readCheckpoint(files)
        if (text === undefined) return [] as Finding[]
        const reading = decodeIpamCheckpoint(text)
        if (reading._tag === "Unreadable") {
          yield* Effect.logWarning("IPAMD checkpoint not understood; ipamd-state not watching", {
            detail: reading.detail
          })
          return [] as Finding[]
        }
        const live = new Set(reading.allocations.map((a) => a.containerID))
        // Expire on access and forget sandboxes IPAMD no longer holds, so the cache stays bounded.
        for (const [id, entry] of cache) if (entry.expiresAtMs <= now || !live.has(id)) cache.delete(id)
        const missing = [...live].filter((id) => !cache.has(id))
        if (missing.length > 0) {
          // No socket: the runtime is not containerd (or not up); this check is not watching.
          if (!(yield* files.exists(CONTAINERD_SOCKET))) return [] as Finding[]
          const answers = yield* cri.podSandboxStatuses(missing).pipe(
            Effect.catch((e) =>
              Effect.logWarning("container runtime unreachable; ipamd-state skipped this run", {
                error: e.message
              }).pipe(Effect.as(undefined))
            )
          )
          if (answers === undefined) return [] as Finding[]
          for (const [id, status] of answers)
            if (status !== undefined)
              cache.set(id, { ...sandboxIpsOf(status), expiresAtMs: now + cacheTtlMs })
        }
        return inconsistentAllocations(reading.allocations, cache, now)
      })
  }
}
