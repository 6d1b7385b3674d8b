/**
 * The leader's renewals on a thread of their own (ADR 0020), as client-go's leader election renews from its own
 * goroutine: on the thread that acts, a renewal waits behind every callback ready before it (a wave of repairs
 * and 1,700 Node events a second at 5,000 nodes), and a 5,000-node bench lost its lease that way and exited.
 * The keeper's thread runs the same `holdLeadership` over its own connection (kube/KubeHttp.ts `makeLeaseHttp`).
 *
 * A keeper must not keep a hung leader: the acting thread bumps a shared counter every BEAT_MS, and the keeper
 * stops renewing, ending leadership, once the counter has not moved for a renew deadline. The acting thread
 * learns how leadership ended from the keeper's message, and the process exits as before (program.ts).
 */
import { parentPort, Worker } from "node:worker_threads"
import { Effect, Logger, Metric } from "effect"
import { leaseRenewalSeconds } from "../observability/metrics.ts"
import { holdLeadership, type LeadershipEnd, type LeaseLock, type LeaseOptions } from "./LeaderElection.ts"

/** The key of `workerData` that makes the binary's entry run as the keeper (main.ts). */
export const KEEPER_DATA = "nodemendLeaseKeeper"

/**
 * The keeper's heap: a young generation as the Deployment's flags give the process, and an old generation with
 * room to spare (the bundle's keeper uses 13 MiB of heap; run from the sources, which load each module of effect
 * apart, 27 MiB), so a leak fails the keeper (KeeperFailed) long before it could hurt the controller.
 */
const KEEPER_HEAP = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 64 }

/** How often the acting thread says it runs. Wall-clock by design: it measures the thread, not the program. */
const BEAT_MS = 1000

export interface KeeperData {
  readonly lease: LeaseOptions
  readonly kubeconfig: string | undefined
  /** One Int32 the acting thread increments every BEAT_MS. */
  readonly beat: SharedArrayBuffer
}

export type KeeperMessage =
  | { readonly _tag: "Renewed"; readonly ms: number; readonly at: number }
  | { readonly _tag: "Ended"; readonly end: LeadershipEnd }

/**
 * On the acting thread: starts the keeper on `entry` (this binary, whose entry runs `runLeaseKeeper` when given
 * KEEPER_DATA) and returns how leadership ended. `onRenewed` sees each renewal (the metric by default).
 */
export const keepLeadership = (
  entry: URL,
  data: Omit<KeeperData, "beat">,
  options: {
    readonly execArgv?: ReadonlyArray<string>
    readonly onRenewed?: (m: Extract<KeeperMessage, { _tag: "Renewed" }>) => void
  } = {}
): Effect.Effect<LeadershipEnd> =>
  Effect.callback<LeadershipEnd>((resume) => {
    const beat = new SharedArrayBuffer(4)
    const beats = new Int32Array(beat)
    const ticker = setInterval(() => Atomics.add(beats, 0, 1), BEAT_MS)
    const worker = new Worker(entry, {
      workerData: { [KEEPER_DATA]: { ...data, beat } satisfies KeeperData },
      resourceLimits: KEEPER_HEAP,
      ...(options.execArgv === undefined ? {} : { execArgv: [...options.execArgv] })
    })
    const end = (e: LeadershipEnd) => resume(Effect.succeed(e))
    const onRenewed =
      options.onRenewed ?? ((m) => Effect.runSync(Metric.update(leaseRenewalSeconds, m.ms / 1000)))
    worker.on("message", (m: KeeperMessage) => (m._tag === "Renewed" ? onRenewed(m) : end(m.end)))
    worker.on("error", (e) => end({ _tag: "KeeperFailed", message: e.message }))
    worker.on("exit", (code) =>
      end({ _tag: "KeeperFailed", message: `the keeper's thread exited (${code})` })
    )
    return Effect.sync(() => {
      clearInterval(ticker)
      void worker.terminate()
    })
  })

/** On the keeper's thread: renews until leadership ends, then says why. */
export const runLeaseKeeper = (data: KeeperData, lockOf: (lease: LeaseOptions) => LeaseLock): void => {
  const beats = new Int32Array(data.beat)
  let seen = Atomics.load(beats, 0)
  let seenAt = Date.now()
  const stalledMs = () => {
    const now = Date.now()
    const b = Atomics.load(beats, 0)
    if (b !== seen) {
      seen = b
      seenAt = now
    }
    return Math.max(0, now - seenAt - BEAT_MS)
  }
  const post = (m: KeeperMessage) => parentPort?.postMessage(m)
  Effect.runFork(
    holdLeadership(lockOf(data.lease), data.lease, {
      renewed: (ms) => post({ _tag: "Renewed", ms, at: Date.now() }),
      stalledMs
    }).pipe(
      Effect.tap((end) => Effect.sync(() => post({ _tag: "Ended", end }))),
      Effect.provide(Logger.layer([Logger.consoleJson]))
    )
  )
}
