/**
 * `kubectl nodemend logs --repair <node>`: the log bundle the repair controller captured before it terminated the
 * node, read from S3 where the controller's record or Events name it. While the repair is in flight its journal
 * record names the object (`logBundle`); once it succeeded the record is gone and the controller's own Events
 * name it: `LogCapture` (`captured to s3://bucket/key (bundle sha256 …, N bytes)`, the digest the node's agent
 * reported) and `RepairSucceeded` (`…; logs: s3://bucket/key`). Only the controller's Events count (its
 * reportingController, in `default`): anyone who can create Events could point the plugin at another object.
 * Pure.
 */
import type { ConfigMap, CoreEvent } from "@nodemend/kube-access"
import type { BundleDigest } from "@nodemend/kube-access/NodeDiagnostic"
import { parseRecord } from "@nodemend/repair-controller"
import { Result } from "effect"
import { eventTimeMs, isControllerEvent } from "./fleet.ts"

export interface RepairBundle {
  readonly bucket: string
  readonly key: string
  /** What the node's agent reported it delivered, when an Event said it. */
  readonly digest?: BundleDigest
  /** Where the plugin read the object's name. */
  readonly from: "record" | "LogCapture" | "RepairSucceeded"
}

const S3_OBJECT = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])\/(\S+)$/
const CAPTURED = /captured to (s3:\/\/\S+)(?: \(bundle sha256 ([0-9a-f]{64}), (\d+) bytes\))?/
const SUCCEEDED = /; logs: (s3:\/\/\S+)$/

export const parseS3Object = (uri: string): { bucket: string; key: string } | undefined => {
  const m = S3_OBJECT.exec(uri)
  return m ? { bucket: m[1]!, key: m[2]! } : undefined
}

/** The bundle the LogCapture or RepairSucceeded Event names, with the digest when it says one. */
const fromEvent = (e: CoreEvent): RepairBundle | undefined => {
  const note = e.message ?? ""
  if (e.reason === "LogCapture") {
    const m = CAPTURED.exec(note)
    const o = m ? parseS3Object(m[1]!) : undefined
    if (!o) return undefined
    return { ...o, from: "LogCapture", ...(m![2] ? { digest: { sha256: m![2], size: Number(m![3]) } } : {}) }
  }
  if (e.reason === "RepairSucceeded") {
    const m = SUCCEEDED.exec(note)
    const o = m ? parseS3Object(m[1]!) : undefined
    return o ? { ...o, from: "RepairSucceeded" } : undefined
  }
  return undefined
}

/**
 * The node's latest captured bundle: the journal's in-flight record first, else the newest of the controller's
 * Events that name one. A digest comes from the LogCapture Event of the same object.
 */
export const repairBundleOf = (
  nodeName: string,
  journalEntry: ConfigMap | undefined,
  events: ReadonlyArray<CoreEvent>
): RepairBundle | undefined => {
  const named = events
    .filter((e) => isControllerEvent(e) && e.involvedObject?.name === nodeName)
    .sort((a, b) => eventTimeMs(b) - eventTimeMs(a))
    .map(fromEvent)
    .filter((b): b is RepairBundle => b !== undefined)
  const digestOf = (bucket: string, key: string) =>
    named.find((b) => b.digest && b.bucket === bucket && b.key === key)?.digest
  const record = journalEntry ? parseRecord(journalEntry.data?.record ?? "") : undefined
  const inFlight =
    record && Result.isSuccess(record) && record.success.node.name === nodeName
      ? record.success.logBundle
      : undefined
  const fromRecord = inFlight ? parseS3Object(inFlight) : undefined
  const latest = fromRecord ? { ...fromRecord, from: "record" as const } : named[0]
  if (!latest) return undefined
  const digest = latest.digest ?? digestOf(latest.bucket, latest.key)
  return { bucket: latest.bucket, key: latest.key, from: latest.from, ...(digest ? { digest } : {}) }
}
