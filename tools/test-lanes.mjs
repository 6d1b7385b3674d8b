// The cluster phase of `npm test` in lanes that run at the same time on the one cluster; the steps of a lane
// (workspace npm scripts) run in turn. Every test scopes itself (its own labels, namespaces, leases), so lanes
// only have to keep apart what cannot share: the two files that use the running Karpenter are in one lane
// (repair-controller's impostor test freezes Karpenter with SIGSTOP for a while).
// NODEMEND_CLUSTER_LANES=1 runs the lanes one after another (a slower machine, or to rule concurrency out).
import { spawn } from "node:child_process"
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { REPO_ROOT } from "./cluster/versions.mjs"

/**
 * [workspace, npm script] steps per lane, balanced by their times on this machine (docs/performance.md, "The test
 * suite's wall time").
 */
export const CLUSTER_LANES = [
  [
    ["@nodemend/cluster-harness", "test:cluster:karpenter"],
    ["@nodemend/repair-controller", "test:cluster:integration"]
  ],
  [
    ["@nodemend/cluster-harness", "test:cluster:control-plane"],
    ["@nodemend/repair-controller", "test:reliability"],
    ["@nodemend/reason-codes", "test:cluster"],
    ["@nodemend/kubectl-nodemend", "test:cluster"]
  ],
  [
    ["@nodemend/demo", "test:cluster"],
    ["@nodemend/agent", "test:cluster"],
    ["@nodemend/repair-controller", "test:cluster:aws"]
  ],
  // In `npm test`, the real-node phase (REAL_NODE_STEP, with its second images build) follows these steps.
  [
    ["@nodemend/deploy-tests", "test:cluster"],
    ["@nodemend/repair-controller", "test:cluster:relapse"],
    // The fleet-level stories (zone breaker, proven pools, the in-flight budget, the queue order): ~140 s.
    ["@nodemend/repair-controller", "test:cluster:pools"],
    ["@nodemend/repair-controller", "test:cluster:queue"]
  ]
]

/**
 * The real-node phase (its own cluster with the real node, started by its globalSetup) as a step of the last
 * lane: most of its ~80 s is waiting on kubelet and containerd, so it overlaps the lanes instead of following them.
 */
export const REAL_NODE_STEP = ["@nodemend/deploy-tests", "test:realnode", { unset: ["NODEMEND_KUBECONFIG"] }]

/**
 * What the lanes leave out: for each workspace package with a `test:cluster` script, that script or, where the
 * lanes run its parts, the parts its `test:cluster` names (`npm run X && npm run Y`). Pure, for tests.
 */
export const uncovered = (packages, lanes = CLUSTER_LANES) => {
  const steps = new Set(lanes.flat().map(([pkg, script]) => `${pkg} ${script}`))
  const missing = []
  for (const { name, scripts } of packages) {
    const whole = scripts?.["test:cluster"]
    if (whole === undefined || steps.has(`${name} test:cluster`)) continue
    const parts = [...whole.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1])
    const left = parts.length === 0 ? ["test:cluster"] : parts.filter((p) => !steps.has(`${name} ${p}`))
    for (const p of left) missing.push(`${name} ${p}`)
  }
  return missing
}

/** The workspace packages ({ name, dir, scripts }). */
export const workspacePackages = () => {
  const root = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"))
  const out = []
  for (const pattern of root.workspaces) {
    const base = join(REPO_ROOT, pattern.replace(/\/\*$/, ""))
    for (const d of readdirSync(base)) {
      const file = join(base, d, "package.json")
      if (!existsSync(file)) continue
      const pkg = JSON.parse(readFileSync(file, "utf8"))
      out.push({ name: pkg.name, dir: join(pattern.replace(/\/\*$/, ""), d), scripts: pkg.scripts ?? {} })
    }
  }
  return out
}

/** Runs one step with its output in a log file; resolves to its exit status. */
const runStep = (dir, script, env, log) =>
  new Promise((resolve) => {
    const fd = openSync(log, "w")
    const child = spawn("npm", ["run", script], { cwd: join(REPO_ROOT, dir), env, stdio: ["ignore", fd, fd] })
    child.on("exit", (code, signal) => {
      closeSync(fd)
      resolve(code ?? (signal ? 1 : 0))
    })
  })

/**
 * Runs the lanes (all at once, or one after another with `serial`); each step's log is printed whole when the step
 * ends, so lanes do not interleave line by line. Resolves to the failed steps
 * ({ taskId, package, task, directory, log }), every step having run.
 */
export const runLanes = async (env, { serial = false, logDir, lanes = CLUSTER_LANES } = {}) => {
  const byName = new Map(workspacePackages().map((p) => [p.name, p]))
  mkdirSync(logDir, { recursive: true })
  const failed = []
  const lane = async (steps, n) => {
    for (const [pkg, script, { unset = [] } = {}] of steps) {
      const dir = byName.get(pkg)?.dir
      if (dir === undefined) throw new Error(`test lanes: no workspace package ${pkg}`)
      const log = join(logDir, `${pkg.replace(/\W+/g, "_")}-${script.replace(/\W+/g, "_")}.log`)
      const started = Date.now()
      const stepEnv = { ...env }
      for (const name of unset) delete stepEnv[name]
      const status = await runStep(dir, script, stepEnv, log)
      const took = Math.round((Date.now() - started) / 1000)
      const head = `lane ${n + 1}: ${pkg} ${script}: ${status === 0 ? "passed" : `FAILED (exit ${status})`} in ${took} s`
      process.stdout.write(`\n===== ${head}\n${readFileSync(log, "utf8")}===== end of ${pkg} ${script}\n`)
      if (status !== 0)
        failed.push({ taskId: `${pkg}#${script}`, package: pkg, task: script, directory: dir, log })
    }
  }
  if (serial) for (const [n, steps] of lanes.entries()) await lane(steps, n)
  else await Promise.all(lanes.map(lane))
  return failed
}
