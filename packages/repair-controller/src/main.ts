#!/usr/bin/env node
/**
 * nodemend-controller: the repair controller binary.
 *
 *   nodemend-controller --config /etc/nodemend/controller.yaml [--kubeconfig PATH] [--identity NAME] [--port N]
 *
 * Layers are composed here and nowhere else. An invalid config file exits 1 with the offending field named.
 */
import { hostname } from "node:os"
import { parseArgs } from "node:util"
import { NodeRuntime } from "@effect/platform-node"
import { Data, Effect, Layer, Logger } from "effect"
import { AwsCloudProvider, decodeAwsConfig } from "./cloud/aws/index.ts"
import type { CloudProvider } from "./cloud/CloudProvider.ts"
import { kwokCloudProviderLayer } from "./cloud/kwok/KwokCloudProvider.ts"
import { loadConfigFile } from "./config/ConfigFile.ts"
import type { ControllerConfig } from "./config/ControllerConfig.ts"
import { startController } from "./controller/Controller.ts"
import { acquireLeadership, holdLeadership } from "./controller/LeaderElection.ts"
import { Kube, loadKubeConfig, makeKube, makeSharedAgent } from "./kube/Kube.ts"
import { logCaptureHookLayer } from "./diagnostics/logCaptureHookLayer.ts"
import { type LogCaptureHook, noLogCaptureLayer } from "./repair/LogCaptureHook.ts"
import { type Readiness, serverLayer } from "./observability/server.ts"

class StartupError extends Data.TaggedError("StartupError")<{ readonly message: string }> {}
class LostLeadership extends Data.TaggedError("LostLeadership")<{ readonly message: string }> {}

/** Provider selection: one case per cloud. The AWS provider (issue #5) adds its layer here. */
const cloudProviderLayer = (config: ControllerConfig): Layer.Layer<CloudProvider, StartupError, Kube> => {
  switch (config.cloudProvider) {
    case "kwok":
      return kwokCloudProviderLayer(config)
    case "aws":
      return Layer.unwrap(
        decodeAwsConfig(config.aws).pipe(
          Effect.mapError((e) => new StartupError({ message: `invalid aws: section: ${e.message}` })),
          Effect.map(AwsCloudProvider.layer)
        )
      )
  }
}

/** Pre-termination log capture: the diagnostics package's NodeDiagnostic request when a destination is set. */
const logCaptureLayer = (config: ControllerConfig): Layer.Layer<LogCaptureHook, never, Kube> =>
  config.logCapture.destination === undefined
    ? noLogCaptureLayer
    : logCaptureHookLayer({
        destination: config.logCapture.destination,
        ...(config.logCapture.categories !== undefined ? { categories: config.logCapture.categories } : {})
      })

const program = Effect.gen(function* () {
  const { values } = parseArgs({
    options: {
      config: { type: "string" },
      kubeconfig: { type: "string" },
      identity: { type: "string" },
      port: { type: "string" }
    }
  })
  if (values.config === undefined) return yield* new StartupError({ message: "--config is required" })
  const config = yield* loadConfigFile(values.config)
  const kc = yield* Effect.try({
    try: () => loadKubeConfig(values.kubeconfig ?? process.env.KUBECONFIG),
    catch: (e) => new StartupError({ message: String(e) })
  })
  const identity = values.identity ?? `${hostname()}-${process.pid}`
  const agent = yield* Effect.tryPromise({
    try: () => makeSharedAgent(kc),
    catch: (e) => new StartupError({ message: `cannot read TLS settings from the kubeconfig: ${String(e)}` })
  })
  const kube = makeKube(kc, identity, agent)
  let state: ReturnType<Readiness["state"]> = "starting"
  let synced = () => false
  const port = values.port !== undefined ? Number(values.port) : config.server.port
  yield* Layer.build(serverLayer(port, { state: () => (state === "leading" && synced() ? "synced" : state) }))
  yield* Effect.logInfo("nodemend-controller starting", {
    identity,
    cloudProvider: config.cloudProvider,
    dryRun: config.dryRun,
    paused: config.paused,
    port
  })

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
  // Built into the program's scope, not provided to startController alone: the cloud provider's resources
  // (SDK clients, the terminate batcher's fiber) must live as long as the controller, not end when it returns.
  const services = yield* Layer.build(
    Layer.mergeAll(cloudProviderLayer(config), logCaptureLayer(config)).pipe(
      Layer.provide(Layer.succeed(Kube, Kube.of(kube)))
    )
  )
  const handle = yield* startController(config, kube).pipe(Effect.provide(services))
  synced = handle.synced
  if (lock === undefined) return yield* Effect.never
  yield* holdLeadership(lock, lease)
  // Like client-go: a replica that lost the lease exits, and its restart stands by.
  return yield* new LostLeadership({ message: `${identity} lost the lease ${lease.namespace}/${lease.name}` })
}).pipe(Effect.scoped, Effect.provide(Logger.layer([Logger.consoleJson])))

NodeRuntime.runMain(program)
