/**
 * The in-cluster `kwok` cloud provider: instances are kwok Nodes. terminate = delete the Node; a replacement
 * is a new kwok Node with the same labels and capacity, created after a configurable delay (like an instance
 * booting); zonal shifts are read from a ConfigMap (`data.shifts`: JSON list of {kind, zone, zoneId, expiresAt,
 * applied}), scheduled events from another (`data.events`: JSON list of {node, id, code, notBefore, notAfter,
 * description, ended}): both in the controller's namespace, which a node cannot write. Here the Node is its own "cloud", so its labels are the facts: a provider for local runs and tests,
 * not a security boundary (docs/security.md).
 */
import { createHash } from "node:crypto"
import type { Node, KubeError } from "@nodemend/kube-access"
import { Clock, Effect, Layer, Result, Schedule, Schema } from "effect"
import type { ControllerConfig } from "../../config/ControllerConfig.ts"
import {
  CONDITION_TYPE_INFO,
  KWOK_REBOOTED_AT_ANNOTATION,
  REPLACEMENT_OF_LABEL,
  ZONE_LABEL
} from "@nodemend/reason-codes"
import { Kube, type KubeShape } from "../../kube/Kube.ts"
import {
  CloudError,
  CloudProvider,
  type InstanceFacts,
  InstanceMismatch,
  type InstanceState,
  type NodeRef,
  type ScheduledEvent,
  type ZonalShift
} from "../CloudProvider.ts"

export const KWOK_NODE_LABEL = "kwok.x-k8s.io/node"
const HOSTNAME_LABEL = "kubernetes.io/hostname"

const ShiftsSchema = Schema.Array(
  Schema.Struct({
    kind: Schema.optionalKey(Schema.Literals(["zonal-shift", "autoshift"])),
    zone: Schema.optionalKey(Schema.String),
    zoneId: Schema.optionalKey(Schema.String),
    expiresAt: Schema.String,
    applied: Schema.optionalKey(Schema.Boolean),
    id: Schema.optionalKey(Schema.String)
  })
)
const decodeShifts = Schema.decodeUnknownResult(Schema.fromJsonString(ShiftsSchema))

const IsoTime = Schema.String.check(
  Schema.makeFilter((s) => !Number.isNaN(Date.parse(s)) || `not a time: ${s}`)
)
const EventsSchema = Schema.Array(
  Schema.Struct({
    node: Schema.String,
    id: Schema.String,
    code: Schema.Literals([
      "instance-retirement",
      "instance-stop",
      "system-reboot",
      "instance-reboot",
      "system-maintenance"
    ]),
    notBefore: IsoTime,
    notAfter: Schema.optionalKey(IsoTime),
    description: Schema.optionalKey(Schema.String),
    ended: Schema.optionalKey(Schema.Literals(["completed", "canceled"]))
  })
)
const decodeEvents = Schema.decodeUnknownResult(Schema.fromJsonString(EventsSchema))

/** The ConfigMap's events of the asked Nodes; a bad ConfigMap is an error (the plans keep their last answer). */
export const kwokScheduledEvents = (
  text: string | undefined,
  asked: ReadonlyArray<{ readonly name: string }>
): Result.Result<ReadonlyMap<string, ReadonlyArray<ScheduledEvent>>, string> => {
  const out = new Map<string, ScheduledEvent[]>()
  if (text === undefined || text.trim() === "") return Result.succeed(out)
  const r = decodeEvents(text)
  if (Result.isFailure(r)) return Result.fail(r.failure.message)
  if (r.success.length === 0) return Result.succeed(out)
  // Built only when there are events: the whole fleet is asked at every refresh.
  const names = new Set(asked.map((n) => n.name))
  for (const e of r.success) {
    if (!names.has(e.node)) continue
    out.set(e.node, [
      ...(out.get(e.node) ?? []),
      {
        id: e.id,
        code: e.code,
        description: e.description ?? "",
        notBefore: Date.parse(e.notBefore),
        ...(e.notAfter !== undefined ? { notAfter: Date.parse(e.notAfter) } : {}),
        ...(e.ended !== undefined ? { ended: e.ended } : {})
      }
    ])
  }
  return Result.succeed(out)
}

const cloudError = (operation: string) => (e: KubeError) =>
  new CloudError({
    operation,
    message: e.message,
    retryable: e.code === undefined || e.code >= 500 || e.code === 429,
    cause: e
  })

/** Deterministic replacement name: the same repair always asks for the same Node. */
export const replacementName = (prefix: string, idempotencyToken: string): string =>
  `${prefix.slice(0, 50)}-r${createHash("sha256").update(idempotencyToken).digest("hex").slice(0, 6)}`

export interface KwokOptions {
  readonly namespace: string
  readonly zonalShiftConfigMap: string
  /** Default `nodemend-scheduled-events`. */
  readonly scheduledEventsConfigMap?: string
  readonly replacementDelayMs: number
  readonly replacementNamePrefix?: string | undefined
  readonly poolLabel: string
}

/** Creating a replacement Node: from 250 ms doubling to 5 s between tries (30 tries: about two minutes). */
const CREATE_RETRY = Schedule.min([Schedule.exponential("250 millis"), Schedule.spaced("5 seconds")])

/** How long after its Node registers a kwok replacement's agent reports (kubelet is Ready well before). */
const AGENT_REPORT_DELAY_MS = 1500
const CAPACITY_KEYS = ["cpu", "memory", "pods", "ephemeral-storage", "nvidia.com/gpu"] as const
const DEFAULT_CAPACITY: Readonly<Record<string, string>> = { cpu: "32", memory: "256Gi", pods: "110" }

const KWOK_SCHEME = "kwok://"
/** A kwok "instance" is its Node: `kwok://<name>`, or no providerID at all (plain kwok Nodes). */
const kwokInstanceId = (node: NodeRef): string | undefined =>
  isKwokInstance(node) ? `${KWOK_SCHEME}${node.name}` : undefined
/** `kwokInstanceId` without building the id (the inventory asks about every Node every refresh). */
const isKwokInstance = (node: NodeRef): boolean =>
  node.providerID === "" ||
  (node.providerID.length === KWOK_SCHEME.length + node.name.length &&
    node.providerID.startsWith(KWOK_SCHEME) &&
    node.providerID.endsWith(node.name))

export const makeKwokCloudProvider = (kube: KubeShape, opts: KwokOptions) =>
  Effect.gen(function* () {
    /** Launches waiting for their delay; a restarted controller asks again (idempotent by name). */
    const pending = new Set<string>()

    const inspect = (node: NodeRef) =>
      Effect.gen(function* () {
        const instanceId = kwokInstanceId(node)
        if (instanceId === undefined)
          return yield* new InstanceMismatch({
            node: node.name,
            providerID: node.providerID,
            message: `providerID ${node.providerID} is not kwok://${node.name}`
          })
        const n = yield* kube.readNode(node.name).pipe(Effect.mapError(cloudError("inspect")))
        const labels = n.metadata?.labels ?? {}
        const capacity = (n.status?.capacity ?? {}) as Readonly<Record<string, unknown>>
        const launch: Record<string, string> = {}
        for (const k of CAPACITY_KEYS) if (capacity[k] !== undefined) launch[k] = String(capacity[k])
        const zone = labels[ZONE_LABEL]
        const pool = labels[opts.poolLabel]
        return {
          instanceId,
          state: n.metadata?.deletionTimestamp ? "shutting-down" : "running",
          ...(zone ? { zone } : {}),
          ...(pool ? { pool } : {}),
          launch,
          owner: { kind: "standalone" }
        } satisfies InstanceFacts
      })

    const describe = (node: NodeRef): Effect.Effect<InstanceState, CloudError> =>
      kube.readNode(node.name).pipe(
        Effect.map((n): InstanceState => (n.metadata?.deletionTimestamp ? "shutting-down" : "running")),
        Effect.catchTag("KubeError", (e) =>
          e.code === 404 ? Effect.succeed("not-found" as const) : Effect.fail(cloudError("describe")(e))
        )
      )

    /**
     * A kwok machine boots healthy, but no agent runs on it: what a healthy agent first reports (every managed type
     * True) is written for it a moment after its Node registers, as an agent's report follows kubelet's, for the
     * replacement health gate to read. A type already reported (a test's fault, written as its agent would) is left.
     */
    const agentFirstReport = (name: string) =>
      Effect.gen(function* () {
        yield* Effect.sleep(AGENT_REPORT_DELAY_MS)
        const n = yield* kube.readNode(name)
        const at = new Date(yield* Clock.currentTimeMillis).toISOString()
        const conditions = CONDITION_TYPE_INFO.filter(
          (c) => !(n.status?.conditions ?? []).some((x) => x.type === c.type)
        ).map((c) => ({
          type: c.type,
          status: "True",
          reason: c.readyReason,
          message: c.readyMessage,
          lastHeartbeatTime: at,
          lastTransitionTime: at
        }))
        if (conditions.length > 0) yield* kube.patchNodeStatus(name, { conditions })
      })

    const createReplacement = (
      name: string,
      node: NodeRef,
      facts: InstanceFacts,
      zone: string | undefined
    ) => {
      const capacity = Object.keys(facts.launch).length > 0 ? { ...facts.launch } : { ...DEFAULT_CAPACITY }
      const labels: Record<string, string> = {
        ...node.labels,
        [HOSTNAME_LABEL]: name,
        [REPLACEMENT_OF_LABEL]: node.name
      }
      if (zone !== undefined) labels[ZONE_LABEL] = zone
      else delete labels[ZONE_LABEL]
      const body: Node = {
        metadata: {
          name,
          labels,
          annotations: { [KWOK_NODE_LABEL]: "fake", "node.alpha.kubernetes.io/ttl": "0" }
        },
        spec: { providerID: `kwok://${name}` },
        status: { capacity: { ...capacity }, allocatable: { ...capacity } }
      }
      return kube.createNode(body).pipe(
        Effect.catchTag("KubeError", (e) => (e.code === 409 ? Effect.void : Effect.fail(e))),
        Effect.andThen(
          kube
            .patchNodeStatus(name, { capacity: { ...capacity }, allocatable: { ...capacity } })
            .pipe(Effect.ignore)
        )
      )
    }

    return CloudProvider.of({
      name: "kwok",
      inspect,
      describe,
      // The Node is the machine: its labels when first asked, which the inventory then fixes for that Node.
      placementsFixed: true,
      locate: (nodes) =>
        Effect.succeed(
          new Map(
            nodes.flatMap((n) => {
              if (!isKwokInstance(n)) return []
              const zone = n.labels[ZONE_LABEL]
              const pool = n.labels[opts.poolLabel]
              return [[n.name, { ...(zone ? { zone } : {}), ...(pool ? { pool } : {}) }] as const]
            })
          )
        ),
      terminate: (node) =>
        kube.deleteNode(node.name).pipe(
          Effect.as("shutting-down" as InstanceState),
          Effect.catchTag("KubeError", (e) =>
            e.code === 404 ? Effect.succeed("not-found" as const) : Effect.fail(cloudError("terminate")(e))
          )
        ),
      reboot: (node) =>
        Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) =>
            kube.patchNodeAnnotations(node.name, {
              [KWOK_REBOOTED_AT_ANNOTATION]: new Date(now).toISOString()
            })
          ),
          Effect.asVoid,
          Effect.mapError(cloudError("reboot"))
        ),
      launchReplacement: (node, { facts, avoidZones, idempotencyToken }) =>
        Effect.gen(function* () {
          const name = replacementName(opts.replacementNamePrefix ?? node.name, idempotencyToken)
          const current = facts.zone
          // Same zone unless shifted; kwok has no capacity map, so a shifted zone simply drops the zone label.
          const zone = current !== undefined && !avoidZones.includes(current) ? current : undefined
          if (!pending.has(name)) {
            pending.add(name)
            yield* Effect.sleep(opts.replacementDelayMs).pipe(
              // Detached from the repair, which does not ask again while this process lives: ride out an API
              // server restart (seconds) rather than give up after five immediate tries.
              Effect.andThen(
                createReplacement(name, node, facts, zone).pipe(
                  Effect.retry({ schedule: CREATE_RETRY, times: 30 }),
                  Effect.andThen(
                    agentFirstReport(name).pipe(Effect.retry({ schedule: CREATE_RETRY, times: 30 }))
                  )
                )
              ),
              Effect.ensuring(Effect.sync(() => pending.delete(name))),
              Effect.ignore,
              Effect.forkDetach
            )
          }
          return { instanceId: `kwok://${name}`, nodeName: name, ...(zone !== undefined ? { zone } : {}) }
        }),
      scheduledEvents: (nodes) =>
        kube.readConfigMap(opts.namespace, opts.scheduledEventsConfigMap ?? "nodemend-scheduled-events").pipe(
          Effect.map((cm) => cm.data?.events),
          Effect.catchTag("KubeError", (e) =>
            e.code === 404 ? Effect.succeed(undefined) : Effect.fail(cloudError("scheduledEvents")(e))
          ),
          Effect.flatMap((text) =>
            Result.match(kwokScheduledEvents(text, nodes), {
              onSuccess: (m) => Effect.succeed(m),
              onFailure: (why) =>
                Effect.fail(
                  new CloudError({
                    operation: "scheduledEvents",
                    message: `bad scheduled events ConfigMap: ${why}`,
                    retryable: false
                  })
                )
            })
          )
        ),
      activeZonalShifts: kube.readConfigMap(opts.namespace, opts.zonalShiftConfigMap).pipe(
        Effect.map((cm) => cm.data?.shifts),
        Effect.catchTag("KubeError", (e) =>
          e.code === 404 ? Effect.succeed(undefined) : Effect.fail(cloudError("activeZonalShifts")(e))
        ),
        Effect.flatMap((text) => {
          if (text === undefined || text.trim() === "") return Effect.succeed([] as ReadonlyArray<ZonalShift>)
          const r = decodeShifts(text)
          if (Result.isFailure(r))
            return Effect.fail(
              new CloudError({
                operation: "activeZonalShifts",
                message: `bad shifts ConfigMap: ${r.failure.message}`,
                retryable: false
              })
            )
          return Effect.succeed(
            r.success
              .filter((s) => s.applied !== false)
              .map(
                (s): ZonalShift => ({
                  kind: s.kind ?? "zonal-shift",
                  expiresAt: new Date(s.expiresAt),
                  ...(s.zone !== undefined ? { zone: s.zone } : {}),
                  ...(s.zoneId !== undefined ? { zoneId: s.zoneId } : {}),
                  ...(s.id !== undefined ? { id: s.id } : {})
                })
              )
          )
        })
      )
    })
  })

export const kwokCloudProviderLayer = (config: ControllerConfig): Layer.Layer<CloudProvider, never, Kube> =>
  Layer.effect(
    CloudProvider,
    Effect.gen(function* () {
      const kube = yield* Kube
      return yield* makeKwokCloudProvider(kube, {
        namespace: config.namespace,
        zonalShiftConfigMap: config.kwok.zonalShiftConfigMap,
        scheduledEventsConfigMap: config.kwok.scheduledEventsConfigMap,
        replacementDelayMs: config.kwok.replacementDelaySeconds * 1000,
        replacementNamePrefix: config.kwok.replacementNamePrefix,
        poolLabel: config.poolLabel
      })
    })
  )
