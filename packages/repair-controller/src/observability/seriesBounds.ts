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
 * `g`'s series for `attributes`, the same series `Metric.withAttributes(g, attributes)` names, with the attributes
 * fixed at construction: Effect keys such a metric once, where a `withAttributes` metric is keyed again (its
 * attributes sorted and serialized) at every update.
 */
export const gaugeWith = (
  g: Metric.Gauge<number>,
  attributes: Record<string, string>
): Metric.Gauge<number> =>
  Metric.gauge(g.id, { ...(g.description !== undefined ? { description: g.description } : {}), attributes })

/** The gauges of one value, each with that value's attributes. */
export type Attributed<G> = { readonly [P in keyof G]: Metric.Gauge<number> }

/**
 * The gauges written per value of one label (a pool, a zone, a pool and reason): `write` the values known now, and
 * every series of a value written before and not now is removed from the registry. `update` is given the value's
 * gauges with its attributes, built once per value (a Metric keys its series the first time it is updated, and the
 * pool gauges are written every 15 s).
 */
export interface GaugeSeries<K, G> {
  readonly write: (
    values: Iterable<K>,
    update: (value: K, gauges: Attributed<G>) => Effect.Effect<void>
  ) => Effect.Effect<ReadonlyArray<K>>
  /** Writes `values` between two `write`s (a change's flush), removing nothing; the next `write` owns them. */
  readonly touch: (
    values: Iterable<K>,
    update: (value: K, gauges: Attributed<G>) => Effect.Effect<void>
  ) => Effect.Effect<void>
  /** Values written at least once and not removed since. */
  readonly written: () => ReadonlyArray<K>
}

export const makeGaugeSeries = <K, G extends Record<string, Metric.Gauge<number>>>(
  gauges: G,
  attributes: (value: K) => Record<string, string>,
  keyOf: (value: K) => string = (v) => JSON.stringify(attributes(v))
): GaugeSeries<K, G> => {
  const written = new Map<string, { readonly value: K; readonly gauges: Attributed<G> }>()
  const entry = (key: string, value: K) => {
    const known = written.get(key)
    if (known !== undefined) return { value, gauges: known.gauges }
    const attrs = attributes(value)
    const attributed = Object.fromEntries(
      Object.entries(gauges).map(([name, g]) => [name, gaugeWith(g, attrs)])
    ) as Attributed<G>
    return { value, gauges: attributed }
  }
  return {
    write: (values, update) =>
      Effect.gen(function* () {
        const now = new Map<string, { readonly value: K; readonly gauges: Attributed<G> }>()
        for (const v of values) {
          const key = keyOf(v)
          now.set(key, entry(key, v))
        }
        for (const e of now.values()) yield* update(e.value, e.gauges)
        const gone: K[] = []
        for (const [key, e] of written)
          if (!now.has(key)) {
            gone.push(e.value)
            for (const g of Object.values(e.gauges)) yield* Metric.remove(g)
          }
        written.clear()
        for (const [key, e] of now) written.set(key, e)
        return gone
      }),
    touch: (values, update) =>
      Effect.forEach(
        values,
        (v) =>
          Effect.suspend(() => {
            const key = keyOf(v)
            const e = entry(key, v)
            return Effect.andThen(
              update(v, e.gauges),
              Effect.sync(() => written.set(key, e))
            )
          }),
        { discard: true }
      ),
    written: () => [...written.values()].map((e) => e.value)
  }
}
