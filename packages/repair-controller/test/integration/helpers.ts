/** Scenario helpers for the controller's integration tests: kwok node pools, conditions, PDBs, events. */
import {
  CoordinationV1Api,
  type CoreV1Api,
  type CoreV1Event,
  type PolicyV1Api,
  type V1Node
} from "@kubernetes/client-node"
import {
  createFakeNode,
  patchNodeCondition,
  RUN_ID,
  TEST_RUN_LABEL,
  uniqueName,
  waitFor,
  type Clients
} from "@nodemend/cluster-harness"
import { expect } from "vitest"

export const POOL_LABEL = "karpenter.sh/nodepool"
export const IT_LABEL = "nodemend.io/it"
export const ZONE = "topology.kubernetes.io/zone"

export interface Scenario {
  readonly tag: string
  readonly pool: string
  readonly labels: Record<string, string>
}

export const scenario = (prefix: string): Scenario => {
  const tag = uniqueName(prefix).slice(0, 40)
  return {
    tag,
    pool: `${tag}-pool`,
    labels: { [IT_LABEL]: tag, [POOL_LABEL]: `${tag}-pool`, [ZONE]: "test-zone-a" }
  }
}

const lease = (s: Scenario, leaseDurationSeconds: number) => ({
  leaderElection: { leaseName: `ctl-${s.tag}`, leaseDurationSeconds, renewIntervalSeconds: 1 }
})

/** A controller config scoped to this scenario's nodes, with second-scale timings. */
export const testConfig = (namespace: string, s: Scenario, over: Record<string, unknown> = {}) => ({
  cloudProvider: "kwok",
  namespace,
  nodeSelector: `${TEST_RUN_LABEL}=${RUN_ID},${IT_LABEL}=${s.tag}`,
  policies: [{ conditionType: "KernelReady", status: "False", tolerationSeconds: 3 }],
  drain: {
    deadlineSeconds: 60,
    onDeadline: "force",
    evictionBackoffInitialMs: 200,
    evictionBackoffMaxMs: 1000
  },
  zonalShift: { refreshSeconds: 1 },
  breaker: { requeueSeconds: 2 },
  // 15 s, the default: a 6 s lease was lost to a slow API server on a loaded machine, and the controller exited.
  ...lease(s, 15),
  kwok: { replacementDelaySeconds: 1, zonalShiftConfigMap: `shifts-${s.tag}` },
  replacement: { timeoutSeconds: 90 },
  resyncSeconds: 30,
  ...over
})

/**
 * For tests where another controller takes over after a kill: it waits out the dead one's lease, so the lease is
 * short. Only these tests risk losing a lease to a slow API server.
 */
export const handoverLease = (s: Scenario) => lease(s, 6)

export const createPool = (core: CoreV1Api, s: Scenario, count: number): Promise<V1Node[]> =>
  Promise.all(
    Array.from({ length: count }, (_, i) => createFakeNode(core, { name: `${s.tag}-${i}`, labels: s.labels }))
  )

export const setKernelReady = (core: CoreV1Api, name: string, status: "True" | "False") =>
  patchNodeCondition(core, name, {
    type: "KernelReady",
    status,
    reason: status === "False" ? "ForkFailedOutOfPIDs" : "KernelIsReady",
    message: status === "False" ? "fork failed: out of PIDs (test)" : "kernel ok",
    lastHeartbeatTime: new Date(),
    lastTransitionTime: new Date()
  })

export const nodeEvents = async (core: CoreV1Api, node: string, reason?: string): Promise<CoreV1Event[]> => {
  const fieldSelector = `involvedObject.name=${node}${reason !== undefined ? `,reason=${reason}` : ""}`
  const l = await core.listNamespacedEvent({ namespace: "default", fieldSelector })
  return l.items
}

export const waitForEvent = (core: CoreV1Api, node: string, reason: string, timeoutMs = 60_000) =>
  waitFor(
    `event ${reason} on ${node}`,
    async () => {
      const e = await nodeEvents(core, node, reason)
      return e.length > 0 ? e : undefined
    },
    { timeoutMs, intervalMs: 250 }
  )

export const readNodeOrUndefined = (core: CoreV1Api, name: string) =>
  core.readNode({ name }).catch(() => undefined)

export const isTainted = (n: V1Node | undefined) =>
  (n?.spec?.taints ?? []).some((t) => t.key === "nodemend.io/repair")

/** `node`'s repair record in the controller's journal (namespace `ns`), or undefined when none. */
export const repairRecord = async (
  core: CoreV1Api,
  ns: string,
  node: string
): Promise<RecordSnapshot | undefined> => {
  const cm = await core
    .readNamespacedConfigMap({ namespace: ns, name: `nodemend-repair-${node}` })
    .catch(() => undefined)
  const record = cm?.data?.record
  return record === undefined ? undefined : (JSON.parse(record) as RecordSnapshot)
}

/** The phase of `node`'s repair in the controller's journal (namespace `ns`), or undefined when none. */
export const repairPhase = async (core: CoreV1Api, ns: string, node: string): Promise<string | undefined> =>
  (await repairRecord(core, ns, node))?.phase

export const replacementOf = async (core: CoreV1Api, name: string): Promise<V1Node | undefined> => {
  const l = await core.listNode({ labelSelector: `nodemend.io/replacement-of=${name}` })
  return l.items[0]
}

export const isReady = (n: V1Node | undefined) =>
  n?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false

export const waitForReplacementReady = (core: CoreV1Api, name: string, timeoutMs = 90_000) =>
  waitFor(
    `replacement of ${name} Ready`,
    async () => {
      const r = await replacementOf(core, name)
      return isReady(r) ? r : undefined
    },
    { timeoutMs, intervalMs: 300 }
  )

export const waitForNodeGone = (core: CoreV1Api, name: string, timeoutMs = 60_000) =>
  waitFor(
    `node ${name} gone`,
    async () => ((await readNodeOrUndefined(core, name)) === undefined ? true : undefined),
    {
      timeoutMs,
      intervalMs: 100
    }
  )

/** A PDB over pods labelled app=<app> with minAvailable; waits until the disruption controller has observed it. */
export const createPdb = async (
  policy: PolicyV1Api,
  namespace: string,
  app: string,
  minAvailable: number
) => {
  const name = `pdb-${app}`.slice(0, 63)
  await policy.createNamespacedPodDisruptionBudget({
    namespace,
    body: { metadata: { name }, spec: { minAvailable, selector: { matchLabels: { app } } } }
  })
  await waitFor(
    `PDB ${name} observed`,
    async () => {
      const p = await policy.readNamespacedPodDisruptionBudget({ name, namespace })
      return (p.status?.observedGeneration ?? 0) >= (p.metadata?.generation ?? 1) &&
        p.status?.expectedPods !== undefined
        ? p
        : undefined
    },
    { timeoutMs: 30_000 }
  )
  return name
}

export const leaseHolder = async (c: Clients, namespace: string, name: string) => {
  const coord = c.kc.makeApiClient(CoordinationV1Api)
  const l = await coord.readNamespacedLease({ name, namespace }).catch(() => undefined)
  return l?.spec?.holderIdentity
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * When an Event happened (ms): eventTime first (the controller's clock; client-node leaves it a string), then the
 * older fields (Dates: String() of a Date would drop its milliseconds).
 */
export const eventTime = (e: CoreV1Event): number => {
  const t: unknown = e.eventTime ?? e.lastTimestamp ?? e.firstTimestamp ?? e.metadata?.creationTimestamp
  return t instanceof Date ? t.getTime() : new Date(String(t)).getTime()
}

/** What the capacity-first check reads of a repair's journal record. */
export interface RecordSnapshot {
  readonly phase: string
  readonly order?: string
  readonly fallback?: string
  readonly drainStartedAt?: string
  readonly drainDeadline?: string
  readonly replacement?: { readonly instanceId?: string; readonly nodeName?: string }
}

/** Samples `node`'s journal record (its ConfigMap in `namespace`) until stopped: it is deleted when the repair succeeds. */
export const journalSampler = (core: CoreV1Api, namespace: string, node: string, everyMs = 150) => {
  const records: RecordSnapshot[] = []
  let running = true
  const loop = (async () => {
    while (running) {
      const record = await repairRecord(core, namespace, node)
      if (record !== undefined) records.push(record)
      await sleep(everyMs)
    }
  })()
  return {
    records,
    stop: async () => {
      running = false
      await loop
    }
  }
}

/**
 * Capacity first, asserted as the Auto Scaling test does: from the controller's own clock, the ReplacementReady
 * Event came no later than the drain began (the journal's drainStartedAt) and than Drained, and Drained no later
 * than TerminatingInstance; from the cluster, the replacement Node turned Ready (whole seconds) before the drain
 * began; and every record from the drain on names the replacement.
 */
export const expectCapacityFirst = async (
  core: CoreV1Api,
  node: string,
  records: ReadonlyArray<RecordSnapshot>,
  replacementNode: string,
  /** Events before this (ms) are an earlier run's about a Node of the same name. */
  since = 0
) => {
  const first = async (reason: string) =>
    (await nodeEvents(core, node, reason))
      .filter((e) => eventTime(e) >= since)
      .sort((a, b) => eventTime(a) - eventTime(b))[0]
  const draining = records.find((r) => r.drainStartedAt !== undefined)
  expect(draining, `a journal record of ${node} with drainStartedAt`).toBeDefined()
  expect(draining?.order).toBe("capacityFirst")
  expect(draining?.fallback).toBeUndefined()
  const drainStartedAt = Date.parse(draining!.drainStartedAt!)
  const readyEvent = await first("ReplacementReady")
  const drained = await first("Drained")
  const terminating = await first("TerminatingInstance")
  expect(readyEvent?.message).toContain(replacementNode)
  expect(eventTime(readyEvent!)).toBeLessThanOrEqual(drainStartedAt)
  expect(eventTime(readyEvent!)).toBeLessThanOrEqual(eventTime(drained!))
  expect(eventTime(drained!)).toBeLessThanOrEqual(eventTime(terminating!))
  const readySince = (await core.readNode({ name: replacementNode })).status?.conditions?.find(
    (c) => c.type === "Ready"
  )?.lastTransitionTime
  expect(Math.floor(new Date(String(readySince)).getTime() / 1000) * 1000).toBeLessThanOrEqual(drainStartedAt)
  // Every record from the drain on already names the replacement: none drained before it was asked for.
  const fromDrain = records.filter((r) => r.phase === "Draining" || r.drainStartedAt !== undefined)
  expect(fromDrain.length).toBeGreaterThan(0)
  expect(
    fromDrain.filter((r) => r.replacement?.nodeName === undefined && r.replacement?.instanceId === undefined)
  ).toEqual([])
}

/** The first RepairHeld Event on one of the `faulted()` replacements: the held node and the Event's message. */
export const waitForHeldReplacement = (
  core: CoreV1Api,
  faulted: () => readonly string[],
  timeoutMs: number
) =>
  waitFor(
    "a RepairHeld event on a faulted replacement",
    async () => {
      for (const n of faulted()) {
        const e = (await nodeEvents(core, n, "RepairHeld"))[0]
        if (e !== undefined) return { node: n, message: e.message ?? "" }
      }
      return undefined
    },
    { timeoutMs, intervalMs: 500 }
  )

/** Waits until every one of `names` is Ready. */
export const waitForReady = (core: CoreV1Api, names: ReadonlyArray<string>, timeoutMs = 120_000) =>
  waitFor(
    `${names.length} Nodes Ready (${names.slice(0, 3).join(", ")}${names.length > 3 ? ", ..." : ""})`,
    async () => {
      const r = await Promise.all(names.map(async (n) => isReady(await readNodeOrUndefined(core, n))))
      return r.every(Boolean) ? true : undefined
    },
    { timeoutMs }
  )

/** `node`'s Events of `reason` written at or after `since` (epoch ms): node names may repeat across runs. */
export const eventsSince = async (core: CoreV1Api, node: string, reason: string, since: number) =>
  (await nodeEvents(core, node, reason)).filter((e) => {
    const at = e.eventTime ?? e.lastTimestamp ?? e.firstTimestamp ?? e.metadata?.creationTimestamp
    return at === undefined || new Date(String(at)).getTime() >= since
  })

/** Waits for `node`'s Events of `reason` written at or after `since`; gives them. */
export const waitForEventSince = (
  core: CoreV1Api,
  node: string,
  reason: string,
  since: number,
  timeoutMs = 60_000
) =>
  waitFor(
    `event ${reason} on ${node}`,
    async () => {
      const found = await eventsSince(core, node, reason, since)
      return found.length > 0 ? found : undefined
    },
    { timeoutMs, intervalMs: 250 }
  )

/** The first of `reasons` an Event about `node` since `since` says: the decision made about it. */
export const firstDecision = (
  core: CoreV1Api,
  node: string,
  reasons: ReadonlyArray<string>,
  since: number,
  timeoutMs = 60_000
) =>
  waitFor(
    `a decision about ${node} (${reasons.join(" | ")})`,
    async () => {
      for (const r of reasons) if ((await eventsSince(core, node, r, since)).length > 0) return r
      return undefined
    },
    { timeoutMs, intervalMs: 250 }
  )
