#!/usr/bin/env node
/**
 * nodemend-agent: the node agent binary.
 *
 *   nodemend-agent --node-name N [--kubeconfig K] [--host-root R] [--config C] [--health-address 127.0.0.1:8002]
 *   nodemend-agent rules check ...        (offline check of log lines against the rules)
 *   nodemend-agent rules list ...         (every log rule after the config's overrides, with its fixtures)
 *   nodemend-agent redact < in > out      (what a log bundle would keep of a text: the bundle's redaction)
 *
 * Composes the Layers (API client, ConditionWriter, EventRecorder, health server), starts the log
 * monitors and the periodic-check scheduler, and runs until SIGTERM. An invalid config exits with code 2
 * and names the field.
 */
import { Cause, Clock, Context, Data, Effect, Exit, Layer, Logger, References, Schema, Stream } from "effect"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { hostFiles } from "./checks/host-files.ts"
import { commandRunnerLayer, CommandRunner } from "./checks/command-runner.ts"
import { buildChecks } from "./checks/registry.ts"
import { type ConfigError, loadConfig } from "./config/load.ts"
import { ruleOverridesFromConfig } from "./config/rule-overrides.ts"
import type { MonitorName } from "@nodemend/reason-codes"
import { HealthAddress, healthServerLayer } from "./health/health-server.ts"
import { ConditionWriter, conditionWriterLayer } from "./k8s/condition-writer.ts"
import { EventRecorder, eventRecorderLayer } from "./k8s/event-recorder.ts"
import { findingRoutes } from "./finding-routes.ts"
import { KubeApi, kubeApiLayer } from "./k8s/kube-api.ts"
import { reportShedFindings } from "./k8s/shed-events.ts"
import { detectAccelerator, managedConditionTypes, readyTextsFor } from "./k8s/managed-conditions.ts"
import { libraryPresent } from "./monitors/nvidia/library-presence.ts"
import { notWatchingDetection } from "./monitors/nvidia/not-watching.ts"
import { XidDeduplicator } from "./monitors/nvidia/xid-deduplicator.ts"
import type { PeriodicCheck } from "./scheduler/periodic-check.ts"
import type { DcgmDiagnosticRunner } from "./diagnostics/DcgmDiagnosticRun.ts"
import { runScheduler } from "./scheduler/scheduler.ts"
import { makeLogMonitors } from "./sources/index.ts"
import { runRulesCheck } from "./cli/rules-check.ts"
import { describeInvalidRule } from "./rules/compile.ts"

export const USAGE = `usage: nodemend-agent --node-name NAME [--kubeconfig PATH] [--host-root DIR] [--config FILE] [--health-address [IP]:PORT] [--log-level LEVEL]
       nodemend-agent rules check [...]
       nodemend-agent rules list [--config FILE] [--source SOURCE] [-o text|json]
       nodemend-agent redact < input > output   (the input as a log bundle would hold it: secrets [REDACTED])`

const AgentFlags = Schema.Struct({
  nodeName: Schema.String.check(Schema.isNonEmpty()),
  kubeconfig: Schema.optional(Schema.String),
  hostRoot: Schema.String.check(Schema.isNonEmpty()),
  config: Schema.optional(Schema.String),
  healthAddress: HealthAddress,
  logLevel: Schema.Literals(["Debug", "Info", "Warn", "Error"])
})
export type AgentFlags = typeof AgentFlags.Type

export class UsageError extends Data.TaggedError("UsageError")<{ readonly detail: string }> {
  override get message(): string {
    return `${this.detail}\n${USAGE}`
  }
}

export class BootIdError extends Data.TaggedError("BootIdError")<{ readonly path: string }> {
  override get message(): string {
    return `cannot read the boot id from ${this.path}`
  }
}

export const parseFlags = (
  argv: readonly string[],
  env: NodeJS.ProcessEnv
): Effect.Effect<AgentFlags, UsageError> =>
  Effect.gen(function* () {
    const parsed = yield* Effect.try({
      try: () =>
        parseArgs({
          args: [...argv],
          strict: true,
          allowPositionals: false,
          options: {
            "node-name": { type: "string" },
            kubeconfig: { type: "string" },
            "host-root": { type: "string" },
            config: { type: "string" },
            "health-address": { type: "string" },
            "log-level": { type: "string" }
          }
        }).values,
      catch: (e) => new UsageError({ detail: (e as Error).message })
    })
    return yield* Schema.decodeUnknownEffect(AgentFlags)({
      nodeName: parsed["node-name"] ?? env.NODE_NAME ?? env.MY_NODE_NAME ?? "",
      kubeconfig: parsed.kubeconfig,
      hostRoot: parsed["host-root"] ?? env.HOST_ROOT ?? "/",
      config: parsed.config,
      // Loopback unless told otherwise: every interface of a hostNetwork pod is every interface of the node.
      healthAddress: parsed["health-address"] ?? "127.0.0.1:8002",
      logLevel: parsed["log-level"] ?? "Info"
    }).pipe(Effect.mapError((e) => new UsageError({ detail: `invalid flags: ${e.message}` })))
  })

export const readBootId = (hostRoot: string): Effect.Effect<string, BootIdError> => {
  const path = join(hostRoot, "proc/sys/kernel/random/boot_id")
  return Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: () => new BootIdError({ path })
  }).pipe(
    Effect.map((s) => s.trim()),
    Effect.filterOrFail(
      (s) => s !== "",
      () => new BootIdError({ path })
    )
  )
}

/** The agent: runs until interrupted. */
export const runAgent = (flags: AgentFlags) =>
  Effect.gen(function* () {
    const config = yield* loadConfig(flags.config)
    const bootId = yield* readBootId(flags.hostRoot)
    const files = hostFiles(flags.hostRoot)
    const accelerator = detectAccelerator(yield* files.text("proc/bus/pci/devices"))
    // The NVIDIA monitor watches only when DCGM or NVML loads; otherwise AcceleratedHardwareReady stays
    // absent (not watching), never Unknown. Neuron detection is log-driven and needs no library.
    // koffi and the monitor's code load only on nodes with NVIDIA devices or libraries (dynamic import).
    const nvidiaConfig = config.monitors.nvidia
    const nvidiaPresent =
      accelerator === "nvidia" ||
      libraryPresent(nvidiaConfig.dcgmLibraryPath) ||
      libraryPresent(nvidiaConfig.nvmlLibraryPath)
    const nvidiaModule =
      nvidiaConfig.enabled && nvidiaPresent
        ? yield* Effect.promise(() => import("./monitors/nvidia/index.ts"))
        : undefined
    const nvidia =
      nvidiaModule !== undefined
        ? yield* Layer.build(
            nvidiaModule.NvidiaLibraries.layer({
              dcgmLibraryPath: nvidiaConfig.dcgmLibraryPath,
              nvmlLibraryPath: nvidiaConfig.nvmlLibraryPath
            })
          ).pipe(Effect.map((ctx) => Context.get(ctx, nvidiaModule.NvidiaLibraries)))
        : undefined
    if (nvidiaConfig.enabled && !nvidiaPresent)
      yield* Effect.logInfo("NVIDIA monitor not watching: no NVIDIA devices and no DCGM or NVML library")
    const nvidiaWatching = nvidia !== undefined && (nvidia.dcgm !== undefined || nvidia.nvml !== undefined)
    if (nvidia !== undefined && !nvidiaWatching)
      yield* (accelerator === "nvidia" ? Effect.logWarning : Effect.logInfo)(
        "NVIDIA monitor not watching: neither DCGM nor NVML could be loaded",
        { problems: nvidia.problems, nvidiaDevicesSeen: accelerator === "nvidia" }
      )
    const acceleratorMonitor = nvidiaWatching ? "nvidia" : accelerator === "neuron" ? "neuron" : undefined
    const managed = managedConditionTypes(config, acceleratorMonitor)
    yield* Effect.logInfo("starting", {
      node: flags.nodeName,
      hostRoot: flags.hostRoot,
      bootId,
      accelerator,
      managed: [...managed]
    })

    const kube = kubeApiLayer(flags.kubeconfig, flags.nodeName)
    const writer = conditionWriterLayer({
      managed,
      bootId,
      heartbeatMs: config.heartbeatSeconds * 1000,
      readyTexts: readyTextsFor(accelerator)
    })
    const recorder = Layer.unwrap(
      Effect.map(Effect.service(ConditionWriter), (w) =>
        eventRecorderLayer({
          nodeUid: w.nodeUid,
          budgetFor: (m: MonitorName) => config.monitors[m].events ?? config.events
        })
      )
    )
    const services = Layer.provideMerge(recorder, writer).pipe(
      Layer.provideMerge(kube),
      Layer.provideMerge(commandRunnerLayer(flags.hostRoot))
    )

    // The log sources are open (each reader at its start position, findings buffered) before the condition writer
    // publishes anything: a fault logged right after a condition first shows True is read, never taken for history
    // (a file source starts at its end; under load the readers used to open seconds after the first write).
    const logs = yield* makeLogMonitors(flags.hostRoot, ruleOverridesFromConfig(config))
    yield* Effect.logInfo("log monitors", { sources: logs.status() })

    yield* Effect.gen(function* () {
      const w = yield* ConditionWriter
      const dedupe = yield* XidDeduplicator
      // Kernel-line XIDs and DCGM/NVML XIDs are one fault: the same XID on the same GPU within 5 s counts once.
      const routes = yield* findingRoutes(config, w, yield* EventRecorder, dedupe, files)
      const sink = routes.others
      if (nvidia !== undefined && !nvidiaWatching && accelerator === "nvidia")
        // GPUs that nobody watches: one Event says why (the condition itself stays absent, never Unknown).
        yield* sink([notWatchingDetection(nvidia.problems, yield* Clock.currentTimeMillis)])
      // The NVIDIA monitor's polls join the other checks in the one scheduler (startup jitter, shared queue).
      const nvidiaChecks: PeriodicCheck[] = []
      let dcgmDiagnostic: DcgmDiagnosticRunner | undefined
      if (nvidiaWatching && nvidiaModule !== undefined) {
        const node = yield* (yield* KubeApi).readNode.pipe(Effect.option)
        const instanceType =
          node._tag === "Some" ? node.value.labels["node.kubernetes.io/instance-type"] : undefined
        const monitor = yield* nvidiaModule
          .makeNvidiaMonitor(
            {
              settings: { ...nvidiaConfig, hostRoot: flags.hostRoot },
              ...(instanceType !== undefined ? { instanceType } : {})
            },
            {
              findings: routes.nvidiaMonitor,
              status: (status) => Effect.logInfo("NVIDIA monitor", status)
            }
          )
          .pipe(Effect.provideService(nvidiaModule.NvidiaLibraries, nvidia))
        nvidiaChecks.push(...monitor.checks)
        dcgmDiagnostic = monitor.runDiagnostic
        yield* Effect.forkScoped(monitor.run.pipe(Effect.scoped))
      }
      yield* Layer.build(healthServerLayer({ address: flags.healthAddress, ready: w.ready }))
      const checks = [...buildChecks(config, files, yield* CommandRunner), ...nvidiaChecks]
      yield* Effect.logInfo("periodic checks", { checks: checks.map((c) => `${c.name}/${c.intervalMs}ms`) })
      yield* Effect.forkScoped(
        runScheduler({ checks, sink, listPids: files.pids, spacingMs: config.checkSpacingMillis })
      )
      if (config.diagnostics.enabled) {
        // Diagnosis is a separate path: loaded only when enabled, its collectors run at nice 19 off the
        // detection path, and its failures never reach the monitors.
        const kubeApi = yield* KubeApi
        const { NodeDiagnosticController } = yield* Effect.promise(() => import("./diagnostics/index.ts"))
        yield* NodeDiagnosticController({
          http: kubeApi.http,
          nodeName: flags.nodeName,
          hostRoot: flags.hostRoot,
          agentState: () =>
            Effect.runPromise(
              kubeApi.readNode.pipe(
                Effect.map((n) => ({ bootId, managed: [...managed], conditions: n.conditions })),
                Effect.catch((e) => Effect.succeed({ error: String(e) }))
              )
            ),
          ...(config.diagnostics.destinationAllowlist !== undefined
            ? { destinationAllowlist: config.diagnostics.destinationAllowlist }
            : {}),
          // On the monitor's DCGM session; a node without DCGM answers NotAvailable.
          ...(dcgmDiagnostic !== undefined ? { dcgmDiagnostic } : {})
        })
      }
      // Every finding the queue holds goes through the sink in one pass, not one sink run per finding: in a
      // storm those runs' allocations, promoted by the deployed 1 MiB young generation, were what grew the old
      // space before its next mark-compact (docs/performance.md, "Peak RSS during storms": 102 -> 90-92 MiB).
      yield* Effect.forkScoped(Stream.runForEachArray(logs.findings, sink))
      // What a log storm shed (repeats only; news and resolutions are always delivered) is named once a minute.
      yield* Effect.forkScoped(reportShedFindings({ drainShed: logs.drainShed, nodeUid: w.nodeUid }))
      return yield* Effect.never
    }).pipe(Effect.provide(Layer.merge(services, XidDeduplicator.layer)))
  }).pipe(Effect.scoped)

const main = (argv: readonly string[]) =>
  Effect.gen(function* () {
    const flags = yield* parseFlags(argv, process.env)
    return yield* runAgent(flags).pipe(
      Effect.provide(Logger.layer([Logger.consoleJson])),
      Effect.provideService(References.MinimumLogLevel, flags.logLevel)
    )
  }).pipe(
    Effect.catchTags({
      UsageError: (e) => exitWith(64, e.message),
      ConfigError: (e: ConfigError) => exitWith(2, e.message),
      InvalidRule: (e) => exitWith(2, describeInvalidRule(e)),
      UnknownLogReader: (e) => exitWith(2, e.message),
      BootIdError: (e) => exitWith(1, e.message),
      KubeAccessError: (e) => exitWith(1, e.message),
      HealthServerError: (e) => exitWith(1, e.message)
    })
  )

/**
 * Runs the agent until SIGTERM/SIGINT, then interrupts it so every finalizer runs (log readers stop,
 * the health server closes). Not NodeRuntime.runMain: @effect/platform-node costs ~35 MiB of resident
 * memory on every node for a signal handler.
 */
const SHUTDOWN_GRACE_MS = 3000

/**
 * process.exit() joins libuv's thread pool, and a read blocked on the /dev/kmsg character device never
 * returns: the agent would hang on exit. Once everything is flushed, it ends itself with SIGKILL.
 */
const hardExit = (): void => {
  process.stdout.write("", () => process.stderr.write("", () => process.kill(process.pid, "SIGKILL")))
}

const runMain = (program: Effect.Effect<void>): void => {
  const fiber = Effect.runFork(program)
  // Raw timers here: they run outside the Effect runtime, which they keep alive and outlast.
  const keepAlive = setInterval(() => undefined, 2 ** 30)
  const stop = () => {
    fiber.interruptUnsafe()
    // A finalizer that cannot finish must not keep a stopping agent alive either.
    setTimeout(hardExit, SHUTDOWN_GRACE_MS).unref()
  }
  process.once("SIGTERM", stop)
  process.once("SIGINT", stop)
  fiber.addObserver((exit) => {
    clearInterval(keepAlive)
    if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause))
      process.stderr.write(`nodemend-agent: ${Cause.pretty(exit.cause)}\n`)
    hardExit()
  })
}

const exitWith = (code: number, message: string) =>
  Effect.sync(() => {
    process.stderr.write(`nodemend-agent: ${message}\n`)
    process.exit(code)
  })

if (import.meta.main) {
  const argv = process.argv.slice(2)
  if (argv[0] === "rules" && argv[1] === "list") {
    // Loaded only for this subcommand: the rules' fixtures are no part of the running agent.
    const { runRulesList } = await import("./cli/rules-list.ts")
    // `rules list | head`: a closed pipe ends the listing, not with a stack trace.
    process.stdout.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code !== "EPIPE") throw e
      process.exit(process.exitCode ?? 0)
    })
    process.exitCode = await runRulesList(argv.slice(2), process.stdout, process.stderr)
  } else if (argv[0] === "rules") {
    process.exitCode = await runRulesCheck(argv.slice(1), process.stdin, process.stdout, process.stderr)
  } else if (argv[0] === "redact") {
    // Loaded only for this subcommand: the running agent loads the redaction with the diagnostics, if enabled.
    const { runRedact } = await import("./cli/redact.ts")
    process.exitCode = await runRedact(argv.slice(1), process.stdin, process.stdout, process.stderr)
  } else if (argv.length === 1 && (argv[0] === "--help" || argv[0] === "-h")) {
    // Asked for: usage on stdout, success (as the controller and the plugin do).
    process.stdout.write(`${USAGE}\n`)
  } else {
    runMain(main(argv))
  }
}
