// The README's test command (`npm test`, also what .ci/run calls):
//   1. lint, typecheck, unit tests (incl. the Helm chart's, with helm built from source and cached) and the
//      reason-code contract (turbo, cached);
//   2. build the control plane (cached under ~/.cache/nodemend), start ONE real local cluster,
//      run every package's cluster tests against it in lanes that run at the same time (tools/test-lanes.mjs),
//      and stop it;
//   3. the real-node phase: build the images (`npm run images`), start a cluster with the real node (kubelet,
//      containerd), run @nodemend/deploy-tests' test:realnode (the chart as shipped), stop it and check that
//      nothing was left on the host. Needs root on Linux; NODEMEND_REAL_NODE=0 skips it. With the cluster phase
//      (plain `npm test`) it runs as a step of the last lane, beside the others, not after them;
//   4. the kind phase: a kind cluster (`kind:up`: Docker, or podman and the locally assembled node image), the
//      kind tests of @nodemend/deploy-tests (test:kind) against it, `kind:down`, and nothing left on the host.
//      Only where the node image is already there (tools/kind/phase.mjs): elsewhere (a fresh machine, CI) it is
//      skipped with the reason and installs nothing. NODEMEND_KIND=0 skips it. It follows the real node (both
//      change the same host sysctls), so it never runs beside the lanes. With --scenario (`npm run test:kind --
//      --scenario`) the demo's scenario runs against the kind cluster too, which the kind tests leave without the chart.
// First of all, the system prerequisites of the phases it runs (tools/prereqs.mjs): as root on Debian it installs
// what is missing (one apt-get install, printed); otherwise it stops with the command to run, or skips an optional
// phase (the real node, moto, the real host commands, the images' test) and says why in the summary.
// A cluster given by NODEMEND_KUBECONFIG is reused and left running (NODEMEND_REALNODE_STATE_DIR for phase 3).
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { build } from "../tools/cluster/build.mjs"
import { build as buildHelm } from "../tools/helm/build.mjs"
import { down, up } from "../tools/cluster/cluster.mjs"
import { down as kindDown, up as kindUp } from "../tools/kind/kind.mjs"
import { probeKindPhase } from "../tools/kind/phase.mjs"
import { REPO_ROOT } from "../tools/cluster/versions.mjs"
import { ensurePrereqs, PHASES } from "../tools/prereqs.mjs"
import { failedTasks, failedTests, latestSummary, renderFailures } from "../tools/test-failures.mjs"
import { CLUSTER_LANES, REAL_NODE_STEP, runLanes } from "../tools/test-lanes.mjs"
import { fileTimes, readReports, render } from "../tools/test-times.mjs"

const run = (cmd, args, env = process.env) => {
  console.log(`\n$ ${cmd} ${args.join(" ")}`)
  const r = spawnSync(cmd, args, { stdio: "inherit", cwd: REPO_ROOT, env })
  return r.status ?? 1
}
const turbo = join(REPO_ROOT, "node_modules", ".bin", "turbo")
const biome = join(REPO_ROOT, "node_modules", ".bin", "biome")
const only = process.argv.includes("--unit")
  ? "unit"
  : process.argv.includes("--cluster")
    ? "cluster"
    : process.argv.includes("--realnode")
      ? "realnode"
      : process.argv.includes("--kind")
        ? "kind"
        : "all"

const realNodeOff = process.env.NODEMEND_REAL_NODE === "0"
// The demo's scenario against the kind cluster too (~190 s more; docs/performance.md "kind").
const kindScenario = process.argv.includes("--scenario")
// Decided before any install: the kind phase's prerequisites (podman) are checked only where it will run.
const kindPlan = only === "all" || only === "kind" ? probeKindPhase() : undefined
const phases = [
  ...(only === "all" || only === "unit" ? ["unit", "hostCommands", "runtimeTest", "moto"] : []),
  ...(only === "all" || only === "cluster" ? ["cluster"] : []),
  ...((only === "all" || only === "realnode") && !realNodeOff ? ["realnode"] : []),
  ...(kindPlan?.run ? ["kind"] : [])
]
const { skips } = ensurePrereqs(phases, { entry: "npm test" })
if (realNodeOff && (only === "all" || only === "realnode")) skips.realnode = "NODEMEND_REAL_NODE=0"
if (kindPlan && !kindPlan.run) skips.kind = kindPlan.reason

/** Wall time per phase, printed in the summary with the cluster phase's slowest files (tools/test-times.mjs). */
const timings = []
const timed = async (name, body) => {
  const started = Date.now()
  try {
    return await body()
  } finally {
    timings.push(`${name} ${Math.round((Date.now() - started) / 1000)} s`)
  }
}
const timesDir = join(REPO_ROOT, ".nodemend", "test-times", new Date().toISOString().replace(/[:.]/g, "-"))

let failed = 0
/** Turbo's run summaries (--summarize), read at the end for the tasks that failed. */
const turboRuns = []
/** The cluster phase's failed lane steps (tools/test-lanes.mjs). */
const failedSteps = []
const turboRun = (args, env) => {
  const since = Date.now()
  const status = run(turbo, ["run", ...args, "--summarize"], env)
  const summary = latestSummary(since)
  if (summary) turboRuns.push(summary)
  return status
}
const unitStarted = Date.now()
if (only === "all" || only === "unit") {
  failed ||= run(biome, ["check", "."])
  // Import rules (.dependency-cruiser.cjs): no import cycle anywhere, the repair controller's layers.
  failed ||= run("npm", ["run", "--silent", "check:deps"])
  // The chart tests need helm; building it here (cached no-op) keeps a cold build out of the parallel unit phase.
  if (!failed) await buildHelm()
  failed ||= turboRun(["typecheck", "test", "check:contract", "--output-logs=new-only"])
  timings.push(`unit ${Math.round((Date.now() - unitStarted) / 1000)} s`)
}
// The real node in the cluster phase's last lane when both phases run (tools/test-lanes.mjs, REAL_NODE_STEP).
const realNodeInLanes = only === "all" && !skips.realnode
const lanes = realNodeInLanes
  ? CLUSTER_LANES.map((steps, n) => (n === CLUSTER_LANES.length - 1 ? [...steps, REAL_NODE_STEP] : steps))
  : CLUSTER_LANES
if (!failed && (only === "all" || only === "cluster"))
  await timed("cluster", async () => {
    let kubeconfig = process.env.NODEMEND_KUBECONFIG
    const stateDir = join(REPO_ROOT, ".nodemend", "test-cluster")
    const ours = !kubeconfig
    try {
      if (ours) {
        await build()
        // With a real Prometheus (nodemend's rules, the PodMonitors' scrape jobs): prometheus.test.ts.
        kubeconfig = (await up({ stateDir, prometheus: true })).kubeconfig
      }
      mkdirSync(timesDir, { recursive: true })
      // The workspaces' builds the cluster tests import (cached), then the tests in lanes (tools/test-lanes.mjs),
      // which start the bundles just built, as shipped (tools/bundle/shipped.mjs bundlesBuilt).
      failed ||= turboRun(["build", "--output-logs=errors-only"])
      if (!failed) {
        const lanesFailed = await runLanes(
          {
            ...process.env,
            NODEMEND_KUBECONFIG: kubeconfig,
            NODEMEND_TEST_TIMES: timesDir,
            NODEMEND_TEST_BUNDLES: "1"
          },
          { serial: process.env.NODEMEND_CLUSTER_LANES === "1", logDir: join(timesDir, "logs"), lanes }
        )
        failedSteps.push(...lanesFailed)
        if (lanesFailed.length > 0) failed = 1
      }
    } finally {
      if (ours) await down({ stateDir, quiet: true })
    }
  })
if (!failed && (only === "all" || only === "realnode") && !realNodeInLanes) {
  if (skips.realnode) console.log(`\nreal-node phase skipped: ${skips.realnode}`)
  else
    await timed("real node", async () => {
      mkdirSync(timesDir, { recursive: true })
      failed ||= run("npm", ["run", "test:realnode", "-w", "@nodemend/deploy-tests"], {
        ...process.env,
        NODEMEND_TEST_TIMES: timesDir
      })
    })
}
if (!failed && (only === "all" || only === "kind")) {
  if (skips.kind) console.log(`\nkind phase skipped: ${skips.kind}`)
  else
    await timed("kind", async () => {
      const stateDir = join(REPO_ROOT, ".nodemend", "kind-test")
      try {
        // The images, not the chart: the kind tests install it with their own values.
        const { kubeconfig } = await kindUp({ stateDir, chart: false, images: true })
        mkdirSync(timesDir, { recursive: true })
        failed ||= run("npm", ["run", "test:kind", "-w", "@nodemend/deploy-tests"], {
          ...process.env,
          NODEMEND_KUBECONFIG: kubeconfig,
          NODEMEND_TEST_TIMES: timesDir
        })
        // The kind tests leave the cluster as they found it, without the chart: the demo's controller and agents,
        // which run outside the cluster, have it to themselves (the demo refuses a cluster with the chart's).
        if (!failed && kindScenario)
          failed ||= run("npm", ["run", "demo:scenario"], { ...process.env, NODEMEND_KUBECONFIG: kubeconfig })
      } finally {
        const left = await kindDown({ stateDir })
        if (left.length > 0) {
          console.log(`\nkind:down left: ${left.join("; ")}`)
          failed = 1
        }
      }
    })
}
if (existsSync(timesDir)) {
  const rows = fileTimes(readReports(timesDir))
  if (rows.length > 0)
    console.log(`\n${render(rows, 15)}\n(all files: node tools/test-times.mjs ${timesDir})`)
}
if (timings.length > 0) console.log(`\ntime per phase: ${timings.join(", ")}`)
for (const [name, why] of Object.entries(skips)) console.log(`\nskipped: ${PHASES[name].title}: ${why}`)
// Last, so that the tail of the output (all a CI page shows) says what failed and why.
if (failed) {
  const reports = existsSync(timesDir) ? readReports(timesDir) : []
  const summary = renderFailures(failedTests(reports), [...turboRuns.flatMap(failedTasks), ...failedSteps])
  if (summary !== "") console.log(`\n${summary}`)
}
console.log(failed ? "\nnodemend tests FAILED" : "\nnodemend tests passed")
process.exit(failed)
