/**
 * nodemend-controller: the repair controller, as main.ts runs it on the process's main thread.
 *
 *   nodemend-controller --config /etc/nodemend/controller.yaml [--kubeconfig PATH] [--identity NAME] [--port N]
 *
 * Layers are composed here and nowhere else. An invalid config file exits 1 with the offending field named;
 * `--help` prints usage, an unknown flag exits 2 (cli.ts). Shipped as one bundle (`npm run build`, ADR 0007).
 */
import { hostname } from "node:os"
import { NodeRuntime } from "@effect/platform-node"
import { Data, Effect, Layer, Logger } from "effect"
import type { CloudProvider } from "./cloud/CloudProvider.ts"
import { kwokCloudProviderLayer } from "./cloud/kwok/KwokCloudProvider.ts"
import { loadConfigFile } from "./config/ConfigFile.ts"
import type { ControllerConfig } from "./config/ControllerConfig.ts"
import { startController } from "./controller/Controller.ts"
import { acquireLeadership, type LeadershipEnd } from "./controller/LeaderElection.ts"
import { keepLeadership } from "./controller/LeaseKeeper.ts"
import { eventLoopDelayLoop } from "./observability/eventLoop.ts"
import { processMetricsLoop } from "./observability/processMetrics.ts"
import { type CliOptions, parseCli, USAGE } from "./cli.ts"
import { Kube, loadKubeAccess, makeKube } from "./kube/Kube.ts"
import { missingDestinationWarning } from "./diagnostics/logCaptureConfig.ts"
import { logCaptureLayer } from "./diagnostics/logCaptureLayer.ts"
import { type Readiness, serverLayer } from "./observability/server.ts"

class StartupError extends Data.TaggedError("StartupError")<{ readonly message: string }> {}
class LostLeadership extends Data.TaggedError("LostLeadership")<{ readonly message: string }> {}

/** Provider selection: one case per cloud. */
const cloudProviderLayer = (config: ControllerConfig): Layer.Layer<CloudProvider, StartupError, Kube> => {
  switch (config.cloudProvider) {
    case "kwok":
      return kwokCloudProviderLayer(config)
    case "aws":
      // Imported only for aws: it loads the AWS SDK (tens of MiB) that a kwok controller never needs.
      return Layer.unwrap(
        Effect.promise(() => import("./cloud/aws/index.ts")).pipe(
          Effect.flatMap(({ AwsCloudProvider, decodeAwsConfig, withEnvironmentRegion }) =>
            // One pool label: the breaker's `poolLabel` is also the instance tag the provider reads and writes.
            decodeAwsConfig({ ...withEnvironmentRegion(config.aws), poolLabel: config.poolLabel }).pipe(
              Effect.mapError((e) => new StartupError({ message: `invalid aws: section: ${e.message}` })),
              Effect.map(AwsCloudProvider.layer)
            )
          )
        )
      )
  }
}

const program = (values: CliOptions, entry: URL) =>
  Effect.gen(function* () {
    const config = yield* loadConfigFile(values.config).pipe(
      // As for a bad flag: the message naming every bad field alone on stderr (no stack trace), exit 1.
      Effect.catchTag("ConfigFileError", (e) =>
        Effect.sync(() => {
          process.stderr.write(`nodemend-controller: ${e.message}\n`)
          return process.exit(1)
        })
      )
    )
    const { access } = yield* Effect.try({
      try: () => loadKubeAccess(values.kubeconfig ?? process.env.KUBECONFIG),
      catch: (e) => new StartupError({ message: e instanceof Error ? e.message : String(e) })
    })
    const identity = values.identity ?? `${hostname()}-${process.pid}`
    const kube = makeKube(access, identity)
    let state: ReturnType<Readiness["state"]> = "starting"
    let synced = () => false
    const port = values.port ?? config.server.port
    yield* Layer.build(
      serverLayer(port, { state: () => (state === "leading" && synced() ? "synced" : state) })
    )
    yield* Effect.logInfo("nodemend-controller starting", {
      identity,
      cloudProvider: config.cloudProvider,
      dryRun: config.dryRun,
      paused: config.paused,
      port
    })
    const captureWarning = missingDestinationWarning(config)
    if (captureWarning !== undefined) yield* Effect.logWarning(captureWarning)

    const lease = {
      namespace: config.namespace,
      name: config.leaderElection.leaseName,
      identity,
      leaseDurationSeconds: config.leaderElection.leaseDurationSeconds,
      renewIntervalSeconds: config.leaderElection.renewIntervalSeconds
    }
    const lock = config.leaderElection.enabled
      ? yield* Effect.sync(() => {
          state = "standby"
        }).pipe(Effect.andThen(acquireLeadership(kube, lease)))
      : undefined
    state = "leading"
    const runController = Effect.gen(function* () {
      // Built into the program's scope, not provided to startController alone: the cloud provider's resources
      // (SDK clients, the terminate batcher's fiber) must live as long as the controller, not end when it returns.
      const services = yield* Layer.build(
        Layer.mergeAll(
          cloudProviderLayer(config),
          // Pre-termination log capture (docs/diagnostics.md): loads nothing without a destination.
          logCaptureLayer(config)
        ).pipe(Layer.provide(Layer.succeed(Kube, Kube.of(kube))))
      )
      const handle = yield* startController(config, kube).pipe(Effect.provide(services))
      synced = handle.synced
      return yield* Effect.never
    })
    yield* Effect.forkScoped(processMetricsLoop)
    if (lock === undefined) return yield* runController
    // Renewal runs from the moment the lease is won, alongside the start (whose first Node list may be retried
    // for as long as the API server is away): a leader that stopped renewing while starting would lose the
    // lease to a standby and then act beside it.
    // On the keeper's own thread (controller/LeaseKeeper.ts), so renewals never wait behind this thread's work.
    yield* Effect.forkScoped(eventLoopDelayLoop)
    const kubeconfig = values.kubeconfig ?? process.env.KUBECONFIG
    const end = yield* Effect.raceFirst(keepLeadership(entry, { lease, kubeconfig }), runController)
    // Like client-go: a replica that lost the lease exits (its workers stop with the program's scope), and its
    // restart stands by.
    return yield* new LostLeadership({ message: lostLeadership(identity, lease, end) })
  }).pipe(Effect.scoped, Effect.provide(Logger.layer([Logger.consoleJson])))

const lostLeadership = (
  identity: string,
  lease: { readonly namespace: string; readonly name: string },
  end: LeadershipEnd
) => {
  const name = `${lease.namespace}/${lease.name}`
  switch (end._tag) {
    case "Superseded":
      return `${identity} lost the lease ${name} to ${end.holder}`
    case "RenewDeadlinePassed":
      return `${identity} could not renew the lease ${name} within its renew deadline`
    case "ControllerStalled":
      return `${identity} gave up the lease ${name}: the controller's thread did not run for ${end.stalledMs} ms`
    case "KeeperFailed":
      return `${identity} stopped leading ${name}: the lease keeper failed (${end.message})`
  }
}

/** Runs the binary's command line; `entry` is the binary's own file, which the lease keeper's thread runs too. */
export const runCli = (argv: ReadonlyArray<string>, entry: URL): void => {
  const cli = parseCli([...argv])
  if (cli._tag === "Help") process.stdout.write(USAGE)
  else if (cli._tag === "Invalid") {
    process.stderr.write(`nodemend-controller: ${cli.message}\n\n${USAGE}`)
    process.exitCode = 2
  } else NodeRuntime.runMain(program(cli.options, entry))
}
