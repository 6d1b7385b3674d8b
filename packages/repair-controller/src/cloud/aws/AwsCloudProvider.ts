/**
 * CloudProvider for AWS: EC2 (describe / terminate / reboot / launch from the node's launch
 * template), optional Auto Scaling termination, and ARC zonal shifts for the fail-closed gate.
 *
 * Never terminate twice: every terminate describes first (an instance already shutting-down,
 * terminated or gone is done), TerminateInstances is idempotent on EC2, and RunInstances carries
 * a ClientToken derived from the controller's idempotency token.
 */
import { createHash } from "node:crypto"
import type { EC2Client, Instance } from "@aws-sdk/client-ec2"
import { REPLACES_TAG } from "@nodemend/reason-codes"
import type { AutoScalingClient } from "@aws-sdk/client-auto-scaling"
import { Clock, Duration, Effect, Layer, Option, Ref, Schedule, Semaphore } from "effect"
import {
  CloudError,
  CloudProvider,
  type InstanceFacts,
  InstanceMismatch,
  type InstanceState,
  type InvalidProviderID,
  type NodeRef,
  type Replacement,
  type Replacer,
  type ZonalShift
} from "../CloudProvider.ts"
import { activeFromLists, activeFromManagedResource } from "./activeZonalShifts.ts"
import { type ArcZonalShiftClientShape, makeArcZonalShiftClient } from "./ArcZonalShiftClient.ts"
import type { AwsConfig } from "./AwsConfig.ts"
import { ASG_NAME_TAG, EC2_LAUNCH_TEMPLATE_ID_TAG, EC2_LAUNCH_TEMPLATE_VERSION_TAG } from "./AwsNodeLabels.ts"
import { type AwsInstanceRef, awsInstanceRef } from "./AwsProviderId.ts"
import { AutoScalingSdk, type AwsCredentialIdentityProvider, CredentialProviders, Ec2Sdk } from "./awsSdk.ts"
import { awsErrorCode, toCloudError } from "./Ec2ErrorMapping.ts"
import { makeTerminateBatcher } from "./TerminateBatcher.ts"

const GONE: ReadonlySet<InstanceState> = new Set(["shutting-down", "terminated", "not-found"])

const KNOWN_STATES: ReadonlySet<string> = new Set([
  "pending",
  "running",
  "stopping",
  "stopped",
  "shutting-down",
  "terminated"
])
const asState = (name: string | undefined): InstanceState =>
  name !== undefined && KNOWN_STATES.has(name) ? (name as InstanceState) : "not-found"

/** EC2 ClientToken: at most 64 ASCII characters. Longer tokens are hashed (still deterministic). */
export const clientTokenFor = (idempotencyToken: string): string =>
  /^[\x21-\x7e]{1,64}$/.test(idempotencyToken)
    ? idempotencyToken
    : createHash("sha256").update(idempotencyToken).digest("hex").slice(0, 64)

export interface AwsClients {
  readonly ec2: EC2Client
  readonly autoScaling: AutoScalingClient
  readonly arc: ArcZonalShiftClientShape
}

/** SDK clients from config: default credential chain, region, endpoint overrides, retries, timeouts. */
export function makeAwsClients(
  config: AwsConfig,
  credentials: AwsCredentialIdentityProvider = CredentialProviders.fromNodeProviderChain()
): AwsClients {
  const timeoutMs = Math.round(config.requestTimeoutSeconds * 1000)
  const common = {
    region: config.region,
    credentials,
    maxAttempts: config.maxAttempts,
    retryMode: "standard",
    // Without throwOnRequestTimeout the SDK only logs a warning when requestTimeout passes.
    requestHandler: {
      requestTimeout: timeoutMs,
      connectionTimeout: Math.min(timeoutMs, 5000),
      throwOnRequestTimeout: true
    }
  } as const
  return {
    ec2: new Ec2Sdk.EC2Client({
      ...common,
      ...(config.endpoints.ec2 ? { endpoint: config.endpoints.ec2 } : {})
    }),
    autoScaling: new AutoScalingSdk.AutoScalingClient({
      ...common,
      ...(config.endpoints.autoScaling ? { endpoint: config.endpoints.autoScaling } : {})
    }),
    arc: makeArcZonalShiftClient({
      region: config.region,
      endpoint: config.endpoints.arcZonalShift,
      credentials,
      requestTimeoutMs: timeoutMs,
      maxAttempts: config.maxAttempts
    })
  }
}

/** EC2's `StateTransitionReason`, e.g. `User initiated (2026-11-30 05:00:00 GMT)`, as epoch ms. */
export const terminatedAt = (reason: string | undefined): number | undefined => {
  const m = /\((\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) GMT\)/.exec(reason ?? "")
  return m ? Date.parse(`${m[1]}T${m[2]}Z`) : undefined
}

const sdk = <A>(
  operation: string,
  f: (abortSignal: AbortSignal) => Promise<A>
): Effect.Effect<A, CloudError> => Effect.tryPromise({ try: f, catch: (e) => toCloudError(operation, e) })

/**
 * Whether EC2's instance is the Node named `nodeName`. On EKS a node registers under the instance's private DNS
 * name (or, with resource-name hostnames, its id), and the node's credentials are issued for that name, so the
 * name binds the Node to the instance; a providerID alone does not (a node can re-register with any).
 */
export const instanceIsNode = (i: Instance, nodeName: string): boolean => {
  const name = nodeName.toLowerCase()
  const dns = (i.PrivateDnsName ?? "").toLowerCase()
  const id = (i.InstanceId ?? "").toLowerCase()
  if (id !== "" && (name === id || name.startsWith(`${id}.`))) return true
  return dns !== "" && (name === dns || name === dns.split(".")[0])
}

const tagOf = (i: Instance, key: string) => i.Tags?.find((t) => t.Key === key)?.Value

/**
 * Who replaces the instance: its Auto Scaling group (autoScaling mode and it has one), nodemend from the launch
 * template EC2 recorded on it, or nobody — then the repair is refused before anything is touched.
 */
export const replacerOf = (
  launch: Readonly<Record<string, string>>,
  mode: AwsConfig["terminationMode"]
): Replacer => {
  if (mode === "autoScaling" && launch.autoScalingGroup) return { by: "autoScaling" }
  if (launch.launchTemplateId) return { by: "nodemend" }
  return {
    by: "none",
    why: `the instance carries no ${EC2_LAUNCH_TEMPLATE_ID_TAG} tag (it was not launched from a launch template)${mode === "autoScaling" ? " and is in no Auto Scaling group" : ""}; nodemend launches replacements only from the template EC2 recorded on the instance`
  }
}

/** The facts a replacement is built from, as EC2 reports them. */
export const instanceFacts = (
  i: Instance,
  poolLabel: string,
  mode: AwsConfig["terminationMode"]
): InstanceFacts => {
  const launch: Record<string, string> = {}
  const put = (k: string, v: string | undefined) => {
    if (v) launch[k] = v
  }
  put("instanceType", i.InstanceType)
  put("subnetId", i.SubnetId)
  put("launchTemplateId", tagOf(i, EC2_LAUNCH_TEMPLATE_ID_TAG))
  put("launchTemplateVersion", tagOf(i, EC2_LAUNCH_TEMPLATE_VERSION_TAG))
  put("autoScalingGroup", tagOf(i, ASG_NAME_TAG))
  const zone = i.Placement?.AvailabilityZone
  const pool = tagOf(i, poolLabel)
  return {
    instanceId: i.InstanceId ?? "",
    state: asState(i.State?.Name),
    ...(zone ? { zone } : {}),
    ...(pool ? { pool } : {}),
    launch,
    replacer: replacerOf(launch, mode)
  }
}

/** Builds the provider over given clients; the scope owns the terminate batcher. */
export const makeAwsCloudProvider = Effect.fn("makeAwsCloudProvider")(function* (
  config: AwsConfig,
  clients: AwsClients
) {
  const { ec2, autoScaling, arc } = clients
  const poolLabel = config.poolLabel
  const zoneNames = new Map<string, string>(Object.entries(config.zoneIds))
  for (const s of config.subnets) if (s.zoneId) zoneNames.set(s.zoneId, s.zone)

  // Zone id -> name pairs come from config and DescribeAvailabilityZones, never from node labels (node-writable).
  const parse = (node: NodeRef): Effect.Effect<AwsInstanceRef, InvalidProviderID> =>
    awsInstanceRef(node.providerID)

  /** DescribeInstances for one id; undefined when EC2 no longer knows it. */
  const describeInstance = (instanceId: string): Effect.Effect<Instance | undefined, CloudError> =>
    sdk("DescribeInstances", (abortSignal) =>
      ec2.send(new Ec2Sdk.DescribeInstancesCommand({ InstanceIds: [instanceId] }), { abortSignal })
    ).pipe(
      Effect.map((out) =>
        out.Reservations?.flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId === instanceId)
      ),
      Effect.catchIf(
        (e) => awsErrorCode(e.cause) === "InvalidInstanceID.NotFound",
        () => Effect.succeed(undefined)
      )
    )

  const stateOf = (instanceId: string) =>
    describeInstance(instanceId).pipe(Effect.map((i) => (i ? asState(i.State?.Name) : "not-found")))

  const terminateBatched = yield* makeTerminateBatcher(
    (ids) =>
      sdk("TerminateInstances", (abortSignal) =>
        ec2.send(new Ec2Sdk.TerminateInstancesCommand({ InstanceIds: [...ids] }), { abortSignal })
      ).pipe(
        Effect.map(
          (out) =>
            new Map(
              (out.TerminatingInstances ?? []).map(
                (t) => [t.InstanceId ?? "", asState(t.CurrentState?.Name)] as const
              )
            ) as ReadonlyMap<string, InstanceState>
        ),
        Effect.catchIf(
          (e) => awsErrorCode(e.cause) === "InvalidInstanceID.NotFound",
          () => Effect.succeed("not-found" as const)
        )
      ),
    Duration.millis(config.terminateBatchWindowMs)
  )

  /** Auto Scaling mode: what each group looked like when we terminated one of its instances. */
  const groupTerminations = new Map<
    string,
    { readonly group: string; readonly before: ReadonlySet<string> }
  >()
  /** Auto Scaling mode: instances we terminated through EC2 because they were in no group. */
  const ec2Terminations = new Set<string>()
  /** Replacement found for each terminated instance, so asking again gives the same answer. */
  const groupReplacements = new Map<string, Replacement>()

  const describeGroup = (group: string) =>
    sdk("DescribeAutoScalingGroups", (abortSignal) =>
      autoScaling.send(
        new AutoScalingSdk.DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [group] }),
        {
          abortSignal
        }
      )
    ).pipe(Effect.map((out) => out.AutoScalingGroups?.find((g) => g.AutoScalingGroupName === group)))

  /** Auto Scaling mode: terminate through the group (it launches the replacement); none if not in one. */
  const terminateInGroup = (instanceId: string): Effect.Effect<Option.Option<InstanceState>, CloudError> =>
    Effect.gen(function* () {
      const found = yield* sdk("DescribeAutoScalingInstances", (abortSignal) =>
        autoScaling.send(
          new AutoScalingSdk.DescribeAutoScalingInstancesCommand({ InstanceIds: [instanceId] }),
          {
            abortSignal
          }
        )
      )
      const member = found.AutoScalingInstances?.find((i) => i.InstanceId === instanceId)
      if (!member?.AutoScalingGroupName) return Option.none()
      const group = member.AutoScalingGroupName
      const before = yield* describeGroup(group)
      groupTerminations.set(instanceId, {
        group,
        before: new Set((before?.Instances ?? []).flatMap((i) => (i.InstanceId ? [i.InstanceId] : [])))
      })
      yield* sdk("TerminateInstanceInAutoScalingGroup", (abortSignal) =>
        autoScaling.send(
          new AutoScalingSdk.TerminateInstanceInAutoScalingGroupCommand({
            InstanceId: instanceId,
            ShouldDecrementDesiredCapacity: false
          }),
          { abortSignal }
        )
      )
      return Option.some<InstanceState>("shutting-down")
    })

  /**
   * Auto Scaling mode: the instance the group launched in place of `old`: the newest member that was not
   * in the group when we terminated `old` (after a controller restart: the newest member other than `old`).
   * Until the group has launched one this is a retryable CloudError; the controller asks again.
   */
  const groupReplacement = (
    old: string,
    group: string,
    terminatedAtMs: number | undefined
  ): Effect.Effect<Replacement, CloudError> =>
    Effect.gen(function* () {
      const known = groupReplacements.get(old)
      if (known) return known
      const g = yield* describeGroup(group)
      if (!g) {
        return yield* new CloudError({
          operation: "DescribeAutoScalingGroups",
          message: `Auto Scaling group ${group} of instance ${old} does not exist`,
          retryable: false
        })
      }
      const before = groupTerminations.get(old)?.before ?? new Set<string>()
      const claimed = new Set([...groupReplacements.values()].map((r) => r.instanceId))
      const candidates = (g.Instances ?? []).flatMap((i) =>
        i.InstanceId &&
        i.InstanceId !== old &&
        !before.has(i.InstanceId) &&
        !claimed.has(i.InstanceId) &&
        !/^(Terminat|Detach|Standby)/.test(i.LifecycleState ?? "")
          ? [i.InstanceId]
          : []
      )
      if (candidates.length === 0) {
        return yield* new CloudError({
          operation: "DescribeAutoScalingGroups",
          message: `waiting for Auto Scaling group ${group} to launch the replacement of ${old}`,
          retryable: true
        })
      }
      const described = yield* sdk("DescribeInstances", (abortSignal) =>
        ec2.send(new Ec2Sdk.DescribeInstancesCommand({ InstanceIds: candidates }), { abortSignal })
      )
      const recorded = groupTerminations.has(old)
      const newest = (described.Reservations ?? [])
        .flatMap((r) => r.Instances ?? [])
        // Without our record (controller restarted), only instances launched after the old one went away.
        .filter(
          (i) => recorded || terminatedAtMs === undefined || (i.LaunchTime?.getTime() ?? 0) >= terminatedAtMs
        )
        .sort((a, b) => (b.LaunchTime?.getTime() ?? 0) - (a.LaunchTime?.getTime() ?? 0))[0]
      if (!newest?.InstanceId) {
        return yield* new CloudError({
          operation: "DescribeInstances",
          message: `the replacement of ${old} in ${group} is not visible in EC2 yet`,
          retryable: true
        })
      }
      const replacement: Replacement = {
        instanceId: newest.InstanceId,
        ...(newest.PrivateDnsName ? { nodeName: newest.PrivateDnsName } : {}),
        ...(newest.Placement?.AvailabilityZone ? { zone: newest.Placement.AvailabilityZone } : {})
      }
      groupReplacements.set(old, replacement)
      return replacement
    })

  /** Polls until terminated (or gone), backing off 1 s -> 15 s, for at most terminationWaitSeconds. */
  const waitTerminated = (
    instanceId: string,
    state: InstanceState
  ): Effect.Effect<InstanceState, CloudError> => {
    if (config.terminationWaitSeconds <= 0 || state === "terminated" || state === "not-found") {
      return Effect.succeed(state)
    }
    const backoff = Schedule.min([Schedule.exponential("1 second", 1.5), Schedule.spaced("15 seconds")])
    return stateOf(instanceId).pipe(
      Effect.repeat({ schedule: backoff, until: (s) => s === "terminated" || s === "not-found" }),
      Effect.timeoutOption(Duration.seconds(config.terminationWaitSeconds)),
      Effect.flatMap((o) => (Option.isSome(o) ? Effect.succeed(o.value) : stateOf(instanceId)))
    )
  }

  const describe = (node: NodeRef) => parse(node).pipe(Effect.flatMap((ref) => stateOf(ref.instanceId)))

  const inspect = (node: NodeRef) =>
    Effect.gen(function* () {
      const ref = yield* parse(node)
      const mismatch = (message: string) =>
        new InstanceMismatch({ node: node.name, providerID: node.providerID, message })
      const i = yield* describeInstance(ref.instanceId)
      if (i === undefined) return yield* mismatch(`EC2 has no instance ${ref.instanceId}`)
      if (!instanceIsNode(i, node.name))
        return yield* mismatch(
          `instance ${ref.instanceId} is not node ${node.name}: its private DNS name is ${i.PrivateDnsName || "(none)"}`
        )
      return instanceFacts(i, poolLabel, config.terminationMode)
    }).pipe(Effect.withSpan("AwsCloudProvider.inspect"))

  const terminate = (node: NodeRef) =>
    Effect.gen(function* () {
      const ref = yield* parse(node)
      const before = yield* stateOf(ref.instanceId)
      if (GONE.has(before)) return yield* waitTerminated(ref.instanceId, before)
      const viaGroup =
        config.terminationMode === "autoScaling" ? yield* terminateInGroup(ref.instanceId) : Option.none()
      if (config.terminationMode === "autoScaling" && Option.isNone(viaGroup))
        ec2Terminations.add(ref.instanceId)
      const started = Option.isSome(viaGroup) ? viaGroup.value : yield* terminateBatched(ref.instanceId)
      yield* Effect.logInfo("terminating instance", {
        node: node.name,
        instanceId: ref.instanceId,
        via: Option.isSome(viaGroup) ? "autoScaling" : "ec2",
        state: started
      })
      return yield* waitTerminated(ref.instanceId, started)
    }).pipe(Effect.withSpan("AwsCloudProvider.terminate"))

  const reboot = (node: NodeRef) =>
    Effect.gen(function* () {
      const ref = yield* parse(node)
      const state = yield* stateOf(ref.instanceId)
      if (state !== "running") {
        return yield* new CloudError({
          operation: "RebootInstances",
          message: `instance ${ref.instanceId} of node ${node.name} is ${state}, not running; not rebooting`,
          retryable: state === "pending"
        })
      }
      yield* sdk("RebootInstances", (abortSignal) =>
        ec2.send(new Ec2Sdk.RebootInstancesCommand({ InstanceIds: [ref.instanceId] }), { abortSignal })
      )
    })

  const isAvoided = (avoid: ReadonlyArray<string>, zone: string, zoneId: string | undefined) =>
    avoid.includes(zone) || (zoneId !== undefined && avoid.includes(zoneId))

  const zoneIdOf = (zone: string): string | undefined => {
    for (const [id, name] of zoneNames) if (name === zone) return id
    return undefined
  }

  const launchReplacement = (
    node: NodeRef,
    options: {
      readonly facts: InstanceFacts
      readonly avoidZones: ReadonlyArray<string>
      readonly idempotencyToken: string
    }
  ): Effect.Effect<Replacement, CloudError | InvalidProviderID> =>
    Effect.gen(function* () {
      const ref = yield* parse(node)
      const fail = (message: string) =>
        Effect.fail(
          new CloudError({
            operation: "RunInstances",
            message: `node ${node.name}: ${message}`,
            retryable: false
          })
        )
      const launch = options.facts.launch
      if (config.terminationMode === "autoScaling") {
        // After termination the instance has left the group, so also look at what we recorded and at the
        // `aws:autoscaling:groupName` tag EC2 Auto Scaling put on it (inspected before the repair began).
        const member = yield* sdk("DescribeAutoScalingInstances", (abortSignal) =>
          autoScaling.send(
            new AutoScalingSdk.DescribeAutoScalingInstancesCommand({ InstanceIds: [ref.instanceId] }),
            {
              abortSignal
            }
          )
        ).pipe(Effect.map((r) => r.AutoScalingInstances?.find((i) => i.InstanceId === ref.instanceId)))
        const group =
          groupTerminations.get(ref.instanceId)?.group ??
          member?.AutoScalingGroupName ??
          launch.autoScalingGroup
        if (group) {
          const old = yield* describeInstance(ref.instanceId)
          return yield* groupReplacement(ref.instanceId, group, terminatedAt(old?.StateTransitionReason))
        }
        const oldState = yield* stateOf(ref.instanceId)
        if (!ec2Terminations.has(ref.instanceId) && GONE.has(oldState)) {
          // Gone, in no group we can see, and not terminated by us through EC2 (e.g. we restarted): it may
          // have been a group's instance whose group already replaced it. Launching one more could double
          // the capacity, so do nothing and say why.
          return yield* fail(
            `autoScaling mode: instance ${ref.instanceId} is ${oldState} and no Auto Scaling group is known for it; not launching a replacement (the group, if any, does)`
          )
        }
      }

      const ltId = launch.launchTemplateId
      if (!ltId)
        return yield* fail(
          `instance ${ref.instanceId} carries no ${EC2_LAUNCH_TEMPLATE_ID_TAG} tag (it was not launched from a launch template); nodemend launches replacements only from the template EC2 recorded on the instance`
        )
      const version = launch.launchTemplateVersion ?? "$Default"
      const instanceType = launch.instanceType
      if (!instanceType) return yield* fail(`EC2 reports no instance type for ${ref.instanceId}`)

      const oldZone = options.facts.zone ?? ref.zone
      const zoneId = zoneIdOf(oldZone)
      let subnetId: string | undefined
      let zone = oldZone
      if (!isAvoided(options.avoidZones, oldZone, zoneId)) {
        subnetId = launch.subnetId ?? config.subnets.find((s) => s.zone === oldZone)?.subnetId
      } else {
        const other = config.subnets.find(
          (s) => !isAvoided(options.avoidZones, s.zone, s.zoneId ?? zoneIdOf(s.zone))
        )
        if (!other) {
          return yield* fail(
            `zone ${oldZone} is shifted away and aws.subnets lists no subnet outside ${options.avoidZones.join(", ")}`
          )
        }
        subnetId = other.subnetId
        zone = other.zone
      }
      const pool = options.facts.pool
      const tags = [
        ...(pool !== undefined ? [{ Key: poolLabel, Value: pool }] : []),
        { Key: REPLACES_TAG, Value: ref.instanceId }
      ]
      const out = yield* sdk("RunInstances", (abortSignal) =>
        ec2.send(
          new Ec2Sdk.RunInstancesCommand({
            MinCount: 1,
            MaxCount: 1,
            LaunchTemplate: { LaunchTemplateId: ltId, Version: version },
            InstanceType: instanceType as never,
            ...(subnetId ? { SubnetId: subnetId } : { Placement: { AvailabilityZone: zone } }),
            ClientToken: clientTokenFor(options.idempotencyToken),
            TagSpecifications: [{ ResourceType: "instance", Tags: tags }]
          }),
          { abortSignal }
        )
      )
      const launched = out.Instances?.[0]
      if (!launched?.InstanceId) return yield* fail("RunInstances returned no instance")
      yield* Effect.logInfo("launched replacement", {
        node: node.name,
        replaces: ref.instanceId,
        instanceId: launched.InstanceId,
        zone: launched.Placement?.AvailabilityZone ?? zone
      })
      return {
        instanceId: launched.InstanceId,
        ...(launched.PrivateDnsName ? { nodeName: launched.PrivateDnsName } : {}),
        zone: launched.Placement?.AvailabilityZone ?? zone
      } satisfies Replacement
    }).pipe(Effect.withSpan("AwsCloudProvider.launchReplacement"))

  // Zonal shifts: GetManagedResource (both arrays), fallback ListZonalShifts + ListAutoshifts; 30 s cache.
  const cache = yield* Ref.make<
    { readonly at: number; readonly shifts: ReadonlyArray<ZonalShift> } | undefined
  >(undefined)
  const refreshLock = yield* Semaphore.make(1)
  const ttlMs = config.zonalShift.cacheSeconds * 1000
  const zoneNameOf = (id: string) => zoneNames.get(id)

  /**
   * ARC names zones by id. Ids no node has shown us yet are looked up once with
   * DescribeAvailabilityZones; if that fails the shift still counts, by zone id only.
   */
  let zonesDescribed = false
  const learnZoneIds = (shifts: ReadonlyArray<ZonalShift>): Effect.Effect<ReadonlyArray<ZonalShift>> => {
    if (zonesDescribed || shifts.every((s) => s.zoneId === undefined || zoneNames.has(s.zoneId))) {
      return Effect.succeed(shifts)
    }
    return sdk("DescribeAvailabilityZones", (abortSignal) =>
      ec2.send(new Ec2Sdk.DescribeAvailabilityZonesCommand({}), { abortSignal })
    ).pipe(
      Effect.tap((out) =>
        Effect.sync(() => {
          zonesDescribed = true
          for (const z of out.AvailabilityZones ?? [])
            if (z.ZoneId && z.ZoneName) zoneNames.set(z.ZoneId, z.ZoneName)
        })
      ),
      Effect.map(() =>
        shifts.map((s) => {
          const zone = s.zoneId === undefined ? undefined : zoneNames.get(s.zoneId)
          return s.zone === undefined && zone !== undefined ? { ...s, zone } : s
        })
      ),
      Effect.catch((e) =>
        Effect.logWarning("DescribeAvailabilityZones failed; shifted zones known by id only", {
          error: e.message
        }).pipe(Effect.as(shifts))
      )
    )
  }

  const fetchShifts = (nowMs: number): Effect.Effect<ReadonlyArray<ZonalShift>, CloudError> => {
    const arn = config.clusterArn!
    const window = { nowMs, refreshAtMs: nowMs + ttlMs }
    return arc.getManagedResource(arn).pipe(
      Effect.map((res) => activeFromManagedResource(res, window, zoneNameOf)),
      Effect.catch((primary) =>
        Effect.all([arc.listActiveZonalShifts(arn), arc.listActiveAutoshifts], { concurrency: 2 }).pipe(
          Effect.map(([zs, as]) => activeFromLists(arn, zs, as, window, zoneNameOf)),
          Effect.tap(() =>
            Effect.logWarning(
              "GetManagedResource failed; zonal shifts read from ListZonalShifts/ListAutoshifts",
              {
                error: primary.message
              }
            )
          ),
          Effect.mapError(
            (fallback) =>
              new CloudError({
                operation: "GetManagedResource",
                message: `${primary.message}; fallback also failed: ${fallback.message}`,
                retryable: primary.retryable || fallback.retryable,
                cause: primary
              })
          )
        )
      )
    )
  }

  const activeZonalShifts: Effect.Effect<ReadonlyArray<ZonalShift>, CloudError> = !config.zonalShift.enabled
    ? Effect.succeed([])
    : refreshLock.withPermits(1)(
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const hit = yield* Ref.get(cache)
          if (hit && now - hit.at < ttlMs) return hit.shifts
          const shifts = yield* fetchShifts(now).pipe(Effect.flatMap(learnZoneIds))
          yield* Ref.set(cache, { at: now, shifts })
          return shifts
        })
      )

  return CloudProvider.of({
    name: "aws",
    inspect,
    describe,
    terminate,
    reboot,
    launchReplacement,
    activeZonalShifts
  })
})

export const AwsCloudProvider = {
  /** The provider for `cloudProvider: aws`, with SDK clients built from `config` (default credential chain). */
  layer: (config: AwsConfig): Layer.Layer<CloudProvider> =>
    Layer.effect(
      CloudProvider,
      Effect.gen(function* () {
        const clients = makeAwsClients(config)
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            clients.ec2.destroy()
            clients.autoScaling.destroy()
          })
        )
        return yield* makeAwsCloudProvider(config, clients)
      })
    ),
  /** Same, over clients you built (tests pass static credentials). */
  layerWithClients: (config: AwsConfig, clients: AwsClients): Layer.Layer<CloudProvider> =>
    Layer.effect(CloudProvider, makeAwsCloudProvider(config, clients))
}
