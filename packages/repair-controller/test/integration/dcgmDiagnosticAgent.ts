/**
 * The node's agent of a kwok replacement in replacementDiagnostic.test.ts, as a process of its own (the integration
 * worker loads nothing native): the agent's NodeDiagnostic controller serving `spec.dcgmDiagnostic` on the NVIDIA
 * monitor's DCGM session, as main.ts wires them, against the C test double of libdcgm.so.4, whose software test
 * passes or fails on GPU 0 as asked. No condition writer: the kwok provider reports the agent's conditions.
 *
 *   node --conditions=source dcgmDiagnosticAgent.ts <kubeconfig> <node> pass|fail [<DCGM's failure message>]
 *
 * It prints `serving` once the DCGM session is open, and runs until killed.
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { kubeAccessFromKubeconfig } from "@nodemend/kube-access"
import { Effect, Layer, Schedule, Schema } from "effect"
import { NodeDiagnosticController } from "../../../agent/src/diagnostics/NodeDiagnosticController.ts"
import { makeKubeHttp } from "../../../agent/src/k8s/kube-http.ts"
import { NvidiaLibraries } from "../../../agent/src/monitors/nvidia/libraries.ts"
import { makeNvidiaMonitor } from "../../../agent/src/monitors/nvidia/monitor.ts"
import { NvidiaMonitorSettings } from "../../../agent/src/monitors/nvidia/settings.ts"
import { XidDeduplicator } from "../../../agent/src/monitors/nvidia/xid-deduplicator.ts"
import { hostWithGpus } from "../../../agent/test/nvidia/gpu-host.ts"
import { buildGpuDoubles, GpuDoubleInjector } from "../../../dcgm-native/test/double/index.ts"

const [kubeconfig = "", nodeName = "", verdict = "pass", message = "software test failed (test)"] =
  process.argv.slice(2)
const SOFTWARE = 15 // DCGM_SOFTWARE_INDEX
const GPUS = 8

const doubles = buildGpuDoubles()
const injector = new GpuDoubleInjector(doubles)
injector.reset()
injector.setGpuCount(GPUS)
for (let gpu = 0; gpu < GPUS; gpu++)
  injector.addDiagResult(
    gpu === 0 && verdict === "fail"
      ? { testId: SOFTWARE, entityId: 0, result: 3, code: 6, message } // DCGM_DIAG_RESULT_FAIL
      : { testId: SOFTWARE, entityId: gpu, result: 0 }
  )

const settings = Schema.decodeUnknownSync(NvidiaMonitorSettings)({
  dcgmLibraryPath: doubles.dcgm,
  nvmlLibraryPath: doubles.nvml,
  hostRoot: hostWithGpus(GPUS)
})

const agent = Effect.gen(function* () {
  const monitor = yield* makeNvidiaMonitor(
    { settings },
    { findings: () => Effect.void, status: () => Effect.void }
  )
  yield* Effect.forkScoped(monitor.run)
  const runDiagnostic = monitor.runDiagnostic
  if (runDiagnostic === undefined) return yield* Effect.die("the monitor has no DCGM")
  // Served once the monitor's session is open (a run before that answers NotAvailable, as it would on a node).
  yield* runDiagnostic(1).pipe(Effect.retry({ schedule: Schedule.spaced("50 millis"), times: 200 }))
  yield* NodeDiagnosticController({
    http: makeKubeHttp(kubeAccessFromKubeconfig(kubeconfig)),
    nodeName,
    hostRoot: mkdtempSync(join(tmpdir(), "nodemend-dcgm-agent-")),
    dcgmDiagnostic: runDiagnostic,
    resync: "2 seconds"
  })
  yield* Effect.sync(() => console.log("serving"))
  return yield* Effect.never
}).pipe(Effect.scoped, Effect.provide(Layer.mergeAll(NvidiaLibraries.layer(settings), XidDeduplicator.layer)))

Effect.runFork(agent)
process.on("SIGTERM", () => process.exit(0))
