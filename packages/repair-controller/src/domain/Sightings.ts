/**
 * The controller's first sight of each unhealthy status (decide/toleration.ts measures the toleration from it): one
 * entry per node and condition type whose status a policy matches, with the lastTransitionTime it carried and when
 * the controller first saw that pair. Kept in the journal (one ConfigMap in the controller's own namespace, which no
 * node can write), so a restarted controller measures from what it saw before, not from its restart. Times are epoch
 * milliseconds.
 */
import { Result, Schema } from "effect"

/** The one ConfigMap (in the controller's namespace) that holds them. */
export const SIGHTINGS_CONFIGMAP = "nodemend-sightings"

const Ms = Schema.Finite

export const SightingSchema = Schema.Struct({
  node: Schema.String,
  uid: Schema.String,
  type: Schema.String,
  status: Schema.String,
  /** The condition's lastTransitionTime when first seen (a new one is a new transition, seen afresh). */
  transition: Ms,
  /** When the controller first saw this status with this lastTransitionTime. */
  seen: Ms
})
export type Sighting = typeof SightingSchema.Type

const SightingsSchema = Schema.Struct({ v: Schema.Literal(1), sightings: Schema.Array(SightingSchema) })

const decodeJson = Schema.decodeUnknownResult(Schema.fromJsonString(SightingsSchema))

export const parseSightings = (text: string): Result.Result<ReadonlyArray<Sighting>, string> => {
  const r = decodeJson(text)
  return Result.isFailure(r) ? Result.fail(r.failure.message) : Result.succeed(r.success.sightings)
}

/**
 * The journal's text, the earliest sightings first (they carry the most waiting), up to `maxBytes`: a ConfigMap
 * holds 1 MiB. Those left out are seen afresh after a restart (later, never sooner); how many is returned.
 */
export const serializeSightings = (
  all: ReadonlyArray<Sighting>,
  maxBytes: number
): { readonly text: string; readonly left: number } => {
  const sorted = [...all].sort((a, b) => a.seen - b.seen || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0))
  const parts: string[] = []
  let bytes = 30
  for (const s of sorted) {
    const part = JSON.stringify(s)
    if (bytes + part.length + 1 > maxBytes) break
    parts.push(part)
    bytes += part.length + 1
  }
  return { text: `{"v":1,"sightings":[${parts.join(",")}]}`, left: sorted.length - parts.length }
}
