/**
 * What ships, for the demo, tests and benches that must run it: a package's bundle built exactly as its
 * `build` script builds it, and the `node` flags and literal environment its deploy/ manifest runs it with.
 * One place, so a change to a build script or a manifest reaches every runner.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { parseAllDocuments } from "yaml"
import { REPO_ROOT } from "../cluster/versions.mjs"

const BUNDLER = "node ../../tools/bundle/bundle.mjs"

/** The bundler's arguments in `packageDir`'s `build` script: [bundle.mjs, entry, output, ...flags]. */
const bundlerArgs = (packageDir) => {
  const script = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")).scripts?.build ?? ""
  const at = script.indexOf(BUNDLER)
  if (at < 0) throw new Error(`${packageDir}: the build script does not run ${BUNDLER}`)
  return script.slice(at).split("&&")[0].trim().split(/\s+/).slice(1)
}

/** Builds `packageDir`'s bundle as its `build` script does (the bundler step only) and returns its path. */
export const buildAsScripted = (packageDir) => {
  const args = bundlerArgs(packageDir)
  execFileSync(process.execPath, args, { cwd: packageDir, stdio: ["ignore", "ignore", "inherit"] })
  return join(packageDir, args[2])
}

/**
 * True where the caller built every package's bundle from the current sources just before the tests
 * (`npm test` runs turbo `build` before its cluster lanes and sets NODEMEND_TEST_BUNDLES=1). The cluster tests
 * then start the bundles, what ships, by default: a controller starts on ~0.2 s of CPU instead of the ~1.4 s of
 * Node's type stripping over the sources, in a phase bound by the machine's cores.
 */
export const bundlesBuilt = () => process.env.NODEMEND_TEST_BUNDLES === "1"

/** `packageDir`'s bundle: the one built for this run (bundlesBuilt), else built now as its script builds it. */
export const shippedBundle = (packageDir) => {
  if (!bundlesBuilt()) return buildAsScripted(packageDir)
  const path = join(packageDir, bundlerArgs(packageDir)[2])
  if (!existsSync(path)) throw new Error(`NODEMEND_TEST_BUNDLES=1 but ${path} was not built`)
  return path
}

/**
 * The first container of the workload (Deployment or DaemonSet) in `deploy/<manifest>`: its `node` flags
 * (the command's `--` words before the bundle) and its environment variables with a literal value.
 */
export const deployedRuntime = (manifest) => {
  const path = join(REPO_ROOT, "deploy", manifest)
  const workload = parseAllDocuments(readFileSync(path, "utf8"))
    .map((d) => d.toJS())
    .find((o) => o?.kind === "Deployment" || o?.kind === "DaemonSet")
  const container = workload?.spec?.template?.spec?.containers?.[0]
  if (container?.command?.[0] !== "node")
    throw new Error(`${path}: the workload's command does not start with node`)
  return {
    flags: container.command.slice(1).filter((a) => a.startsWith("--")),
    env: Object.fromEntries(
      (container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value])
    )
  }
}
