/**
 * Settings of the NVIDIA monitor, as a Schema the agent config embeds (`monitors.nvidia`); the monitor reads them
 * through monitors/nvidia/settings.ts.
 * Every field has a default; durations are in seconds like the rest of the agent config.
 */
import { Effect, Schema } from "effect"

const withDefault = <S extends Schema.Top>(schema: S, value: S["Encoded"]) =>
  schema.pipe(Schema.withDecodingDefault(Effect.succeed(value)))

const Seconds = Schema.Finite.check(Schema.isGreaterThan(0))

export const DcgmTargetSettings = Schema.Union([
  Schema.Struct({
    mode: Schema.Literal("standalone"),
    /** `host:port` (default port 5555) or, with unixSocket, a socket path. */
    address: withDefault(Schema.String.check(Schema.isNonEmpty()), "localhost:5555"),
    unixSocket: withDefault(Schema.Boolean, false),
    connectTimeoutSeconds: withDefault(Seconds, 5)
  }),
  Schema.Struct({ mode: Schema.Literal("embedded") })
])

export const NvidiaMonitorSettings = Schema.Struct({
  dcgmLibraryPath: withDefault(Schema.String.check(Schema.isNonEmpty()), "libdcgm.so.4"),
  nvmlLibraryPath: withDefault(Schema.String.check(Schema.isNonEmpty()), "libnvidia-ml.so.1"),
  dcgm: withDefault(DcgmTargetSettings, {
    mode: "standalone",
    address: "localhost:5555",
    unixSocket: false,
    connectTimeoutSeconds: 5
  }),
  /** DCGMError only after the host engine has been unreachable this long (process start counts). */
  graceSeconds: withDefault(Seconds, 60),
  /** Polled fields, device counts: cadence and look-back window. */
  pollSeconds: withDefault(Seconds, 300),
  windowSeconds: withDefault(Seconds, 300),
  /** Session liveness check cadence. */
  healthCheckSeconds: withDefault(Seconds, 30),
  reconnectInitialSeconds: withDefault(Seconds, 1),
  reconnectMaxSeconds: withDefault(Seconds, 30),
  /**
   * DCGM active diagnostics (like NMA's DCGM_DIAG_LEVEL): 0 off (default); 1..4 runs dcgmRunDiagnostic at
   * short/medium/long/xlong on all GPUs every poll interval. Level 1 takes seconds, higher levels minutes and
   * load the GPUs: enable only where that is acceptable.
   */
  diagLevel: withDefault(Schema.Literals([0, 1, 2, 3, 4]), 0),
  /** Where the host's /dev and /sys are mounted. */
  hostRoot: withDefault(Schema.String, "/"),
  /** Extra or corrected GPU counts per instance type. */
  expectedGpuCounts: withDefault(Schema.Record(Schema.String, Schema.Int.check(Schema.isGreaterThan(0))), {})
})
export type NvidiaMonitorSettings = typeof NvidiaMonitorSettings.Type

export const defaultNvidiaSettings = (): NvidiaMonitorSettings =>
  Schema.decodeUnknownSync(NvidiaMonitorSettings)({})
