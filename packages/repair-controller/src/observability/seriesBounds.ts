/**
 * Metric label values come only from sets the controller knows (issue #37): a node can write its own labels and
 * conditions, and every distinct value it wrote would otherwise be a series kept for ever (a node relabelling
 * itself 12,000 times grew /metrics to 5.8 MB and the controller's RSS by 170 MB). Pools: those the controller
 * counts by proven placements, configured pools and Karpenter NodePools; zones: those proven placements name;
 * reasons: the catalog's, the controller's own (planned and requested repairs) and the config's, else `other`. A gauge series whose pool or zone is gone is removed
 * (`GaugeSeries`). Pure apart from the registry's removal.
 */
import { KEYS, resolveReason } from "@nodemend/reason-codes"
import { Effect, Metric } from "effect"

/** A reason that is neither in the catalog nor named by the config. */
export const OTHER_REASON = "other"
/** A catalog template's integer parameters above this are labelled by the template (XIDs are below 1000). */
const MAX_TEMPLATE_INTEGER = 999

/** The controller's own repair reasons (EC2 scheduled events, ManualRepairRequested): a fixed set. */
const CONTROLLER_REASONS: ReadonlySet<string> = new Set(
  KEYS.filter((k) => k.kind === "repair-reason").map((k) => k.key)
)

/** The `reason` label of a reason a node wrote: bounded by the catalog, the controller's own and the config. */
export const metricReason = (
  config: { readonly reasons: Readonly<Record<string, unknown>> },
  reason: string
): string => {
  if (reason === "" || Object.hasOwn(config.reasons, reason) || CONTROLLER_REASONS.has(reason)) return reason
  const r = resolveReason(reason)
  if (r === undefined) return OTHER_REASON
  const small = Object.values(r.parameters).every(
    (v) => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= MAX_TEMPLATE_INTEGER
  )
  return small ? reason : r.entry.code
}

/**
 * The gauges written per value of one label (a pool, a zone, a pool and reason): `write` the values known now, and
 * every series of a value written before and not now is removed from the registry.
 */
export interface GaugeSeries<K> {
  readonly write: (
    values: Iterable<K>,
    update: (value: K) => Effect.Effect<void>
  ) => Effect.Effect<ReadonlyArray<K>>
  /** Writes `values` between two `write`s (a change's flush), removing nothing; the next `write` owns them. */
  readonly touch: (values: Iterable<K>, update: (value: K) => Effect.Effect<void>) => Effect.Effect<void>
  /** Values written at least once and not removed since. */
  readonly written: () => ReadonlyArray<K>
}

export const makeGaugeSeries = <K>(
  gauges: ReadonlyArray<Metric.Gauge<number>>,
  attributes: (value: K) => Record<string, string>,
  keyOf: (value: K) => string = (v) => JSON.stringify(attributes(v))
): GaugeSeries<K> => {
  const written = new Map<string, K>()
  return {
    write: (values, update) =>
      Effect.gen(function* () {
        const now = new Map<string, K>()
        for (const v of values) now.set(keyOf(v), v)
        for (const v of now.values()) yield* update(v)
        const gone: K[] = []
        for (const [key, v] of written)
          if (!now.has(key)) {
            gone.push(v)
            for (const g of gauges) yield* Metric.remove(Metric.withAttributes(g, attributes(v)))
          }
        written.clear()
        for (const [key, v] of now) written.set(key, v)
        return gone
      }),
    touch: (values, update) =>
      Effect.forEach(
        values,
        (v) =>
          Effect.andThen(
            update(v),
            Effect.sync(() => written.set(keyOf(v), v))
          ),
        {
          discard: true
        }
      ),
    written: () => [...written.values()]
  }
}
