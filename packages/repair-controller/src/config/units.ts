/**
 * Number schemas named for their unit, shared by the controller's config file and the `aws:` section, so a
 * milliseconds field can never be validated as seconds. Finite rejects NaN and ±Infinity (YAML `.nan`, `.inf`).
 */
import { Schema } from "effect"

/** A duration in seconds, 0 allowed (e.g. a toleration of 0 repairs at once); fractions allowed. */
export const Seconds = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

/** A period or timeout in seconds that must be over 0: 0 would mean a busy loop or an instant failure. */
export const PositiveSeconds = Schema.Finite.check(Schema.isGreaterThan(0))

/** A duration in whole milliseconds, 0 allowed. */
export const Millis = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** A duration in whole milliseconds over 0 (a backoff that starts at 0 never backs off). */
export const PositiveMillis = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))

/** A percentage from 0 to 100; fractions allowed. */
export const Percent = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 100 }))

/** A TCP port; 0 asks the OS for a free one. */
export const Port = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65_535 }))

/** A whole count of at least 1. */
export const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
