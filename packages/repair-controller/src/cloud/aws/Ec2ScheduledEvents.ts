/**
 * `scheduledEvents` on EC2: DescribeInstanceStatus with the Nodes' instance ids, `IDS_PER_CALL` a call (EC2's
 * limit when ids are given; such calls are not paged) and `IncludeAllInstances` (a stopped or pending instance
 * still has its events). An id EC2 no longer knows fails its whole call (`InvalidInstanceID.NotFound`, naming the
 * ids): the call is made again without them. Events come back keyed by Node name; one whose description starts
 * `[Completed]` or `[Canceled]` has ended (EC2 lists it for up to a week).
 */
import type { EC2Client, InstanceStatusEvent } from "@aws-sdk/client-ec2"
import { Effect } from "effect"
import type { CloudError, NodeRef, ScheduledEvent, ScheduledEventCode } from "../CloudProvider.ts"
import { parseAwsProviderId } from "./AwsProviderId.ts"
import { Ec2Sdk } from "./awsSdk.ts"
import { awsCall } from "./Ec2ErrorMapping.ts"

export const IDS_PER_CALL = 100
/** Calls made again without the ids EC2 said it does not know: bounded, as each drops at least one id. */
const MAX_RETRIES_WITHOUT_UNKNOWN = 5

const CODES: ReadonlySet<string> = new Set<ScheduledEventCode>([
  "instance-retirement",
  "instance-stop",
  "system-reboot",
  "instance-reboot",
  "system-maintenance"
])

/** One EC2 event in the controller's terms; undefined for a code or a time it cannot read (it plans nothing). */
export const toScheduledEvent = (e: InstanceStatusEvent): ScheduledEvent | undefined => {
  if (e.Code === undefined || !CODES.has(e.Code) || e.NotBefore === undefined) return undefined
  const description = e.Description ?? ""
  const ended = description.startsWith("[Completed]")
    ? "completed"
    : description.startsWith("[Canceled]")
      ? "canceled"
      : undefined
  return {
    id: e.InstanceEventId ?? `${e.Code}@${e.NotBefore.toISOString()}`,
    code: e.Code as ScheduledEventCode,
    description,
    notBefore: e.NotBefore.getTime(),
    ...(e.NotAfter !== undefined ? { notAfter: e.NotAfter.getTime() } : {}),
    ...(ended !== undefined ? { ended } : {})
  }
}

/** The ids an `InvalidInstanceID.NotFound` message names ("The instance IDs 'i-1, i-2' do not exist"). */
export const unknownIds = (e: CloudError): ReadonlyArray<string> =>
  /InvalidInstanceID\.NotFound/.test(e.message) ? (e.message.match(/i-[0-9a-f]{8,17}/g) ?? []) : []

const describeBatch = (
  ec2: EC2Client,
  ids: ReadonlyArray<string>,
  retries = 0
): Effect.Effect<ReadonlyArray<readonly [string, ReadonlyArray<ScheduledEvent>]>, CloudError> =>
  ids.length === 0
    ? Effect.succeed([])
    : awsCall("DescribeInstanceStatus", (abortSignal) =>
        ec2.send(
          new Ec2Sdk.DescribeInstanceStatusCommand({ InstanceIds: [...ids], IncludeAllInstances: true }),
          { abortSignal }
        )
      ).pipe(
        Effect.map((out) =>
          (out.InstanceStatuses ?? []).flatMap((s) =>
            s.InstanceId === undefined
              ? []
              : [[s.InstanceId, (s.Events ?? []).flatMap((e) => toScheduledEvent(e) ?? [])] as const]
          )
        ),
        Effect.catch((e) => {
          const gone = new Set(unknownIds(e))
          const rest = ids.filter((id) => !gone.has(id))
          return gone.size === 0 || rest.length === ids.length || retries >= MAX_RETRIES_WITHOUT_UNKNOWN
            ? Effect.fail(e)
            : describeBatch(ec2, rest, retries + 1)
        })
      )

export const makeScheduledEvents =
  (ec2: EC2Client) =>
  (
    nodes: ReadonlyArray<NodeRef>
  ): Effect.Effect<ReadonlyMap<string, ReadonlyArray<ScheduledEvent>>, CloudError> =>
    Effect.gen(function* () {
      // A Node whose providerID names no EC2 instance has no events to read (its repairs are refused elsewhere).
      const nodeOf = new Map<string, string>()
      for (const n of nodes) {
        const ref = parseAwsProviderId(n.providerID)
        if (!("instanceId" in ref)) continue
        nodeOf.set(ref.instanceId, n.name)
      }
      const ids = [...nodeOf.keys()]
      const batches: string[][] = []
      for (let i = 0; i < ids.length; i += IDS_PER_CALL) batches.push(ids.slice(i, i + IDS_PER_CALL))
      const answers = yield* Effect.forEach(batches, (b) => describeBatch(ec2, b), { concurrency: 2 })
      const out = new Map<string, ReadonlyArray<ScheduledEvent>>()
      for (const [id, events] of answers.flat()) {
        const name = nodeOf.get(id)
        if (name !== undefined && events.length > 0) out.set(name, events)
      }
      return out
    }).pipe(Effect.withSpan("AwsCloudProvider.scheduledEvents"))
