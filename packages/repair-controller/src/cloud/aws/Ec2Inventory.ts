/**
 * `locate` on EC2: the fleet inventory. Which live instance each Node name is, its placement zone and its pool
 * tag, from DescribeInstances filtered by the names themselves (ADR 0017): a Node's name is the one its
 * credentials were issued for, so it cannot be forged the way a label or a providerID can, and the names are
 * exactly the machines the breakers count. Names go `NAMES_PER_CALL` a call (EC2 takes at most 200 filter values
 * a request, the states included), each call paged; an instance is the name's only as `inspect` decides
 * (`instanceIsNode`).
 */
import type { EC2Client, Filter, Instance } from "@aws-sdk/client-ec2"
import { Effect } from "effect"
import type { CloudError, Location, NodeRef } from "../CloudProvider.ts"
import { Ec2Sdk } from "./awsSdk.ts"
import { awsCall } from "./Ec2ErrorMapping.ts"
import { instanceIsNode } from "./InstanceFacts.ts"

/** Instances that still are machines of the fleet; terminated and shutting-down ones count nowhere. */
const LIVE_STATES = ["pending", "running", "stopping", "stopped"]
export const NAMES_PER_CALL = 190
const PAGE_SIZE = 1000

const ID_NAME = /^(i-[0-9a-f]{8,17})(?:\.|$)/u

/** One DescribeInstances filter set per batch of names: ids for resource-name hosts, DNS names for the others. */
export const inventoryFilters = (names: ReadonlyArray<string>): ReadonlyArray<ReadonlyArray<Filter>> => {
  const ids = new Set<string>()
  const dns = new Set<string>()
  for (const name of names) {
    const lower = name.toLowerCase()
    const id = ID_NAME.exec(lower)?.[1]
    if (id !== undefined) ids.add(id)
    // A Node named by its DNS name's first label (`ip-10-0-0-1`) is that instance's too (instanceIsNode).
    else dns.add(lower.includes(".") ? lower : `${lower}.*`)
  }
  const batches = (key: string, values: ReadonlyArray<string>) => {
    const out: Filter[][] = []
    for (let i = 0; i < values.length; i += NAMES_PER_CALL)
      out.push([
        { Name: key, Values: values.slice(i, i + NAMES_PER_CALL) },
        { Name: "instance-state-name", Values: LIVE_STATES }
      ])
    return out
  }
  return [...batches("instance-id", [...ids]), ...batches("private-dns-name", [...dns])]
}

/** Each name's instance among `instances`, as inspect binds a name to an instance. */
export const locations = (
  names: ReadonlyArray<string>,
  instances: ReadonlyArray<Instance>,
  poolLabel: string
): ReadonlyMap<string, Location> => {
  const byKey = new Map<string, Instance>()
  for (const i of instances) {
    const dns = (i.PrivateDnsName ?? "").toLowerCase()
    for (const key of [i.InstanceId?.toLowerCase(), dns, dns.split(".")[0]])
      if (key !== undefined && key !== "") byKey.set(key, i)
  }
  const out = new Map<string, Location>()
  for (const name of names) {
    const lower = name.toLowerCase()
    const i = byKey.get(ID_NAME.exec(lower)?.[1] ?? lower)
    if (i === undefined || !instanceIsNode(i, name)) continue
    const zone = i.Placement?.AvailabilityZone
    const pool = i.Tags?.find((t) => t.Key === poolLabel)?.Value
    out.set(name, { ...(zone ? { zone } : {}), ...(pool ? { pool } : {}) })
  }
  return out
}

const describePaged = (ec2: EC2Client, filters: ReadonlyArray<Filter>) =>
  Effect.gen(function* () {
    const found: Instance[] = []
    let token: string | undefined
    do {
      const out = yield* awsCall("DescribeInstances", (abortSignal) =>
        ec2.send(
          new Ec2Sdk.DescribeInstancesCommand({
            Filters: [...filters],
            MaxResults: PAGE_SIZE,
            ...(token !== undefined ? { NextToken: token } : {})
          }),
          { abortSignal }
        )
      )
      for (const r of out.Reservations ?? []) found.push(...(r.Instances ?? []))
      token = out.NextToken || undefined
    } while (token !== undefined)
    return found
  })

/** The live instances that may be `names`' (still to be bound with `instanceIsNode`). */
export const describeByNames = (
  ec2: EC2Client,
  names: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<Instance>, CloudError> =>
  Effect.forEach(inventoryFilters(names), (f) => describePaged(ec2, f), { concurrency: 2 }).pipe(
    Effect.map((found) => found.flat())
  )

export const makeLocate =
  (ec2: EC2Client, poolLabel: string) =>
  (nodes: ReadonlyArray<NodeRef>): Effect.Effect<ReadonlyMap<string, Location>, CloudError> =>
    Effect.gen(function* () {
      const names = nodes.map((n) => n.name)
      return locations(names, yield* describeByNames(ec2, names), poolLabel)
    }).pipe(Effect.withSpan("AwsCloudProvider.locate"))
