/**
 * What ships, for the demo, tests and benches that must run it: a package's bundle built exactly as its
 * `build` script builds it, and the `node` flags and literal environment its deploy/ manifest runs it with.
 * One place, so a change to a build script or a manifest reaches every runner.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { parseAllDocuments } from "yaml"
import { REPO_ROOT } from "../cluster/versions.mjs"

const BUNDLER = "node ../../tools/bundle/bundle.mjs"

/** Builds `packageDir`'s bundle as its `build` script does (the bundler step only) and returns its path. */
export const buildAsScripted = (packageDir) => {
  const script = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")).scripts?.build ?? ""
  const at = script.indexOf(BUNDLER)
  if (at < 0) throw new Error(`${packageDir}: the build script does not run ${BUNDLER}`)
  const args = script.slice(at).split("&&")[0].trim().split(/\s+/).slice(1)
  execFileSync(process.execPath, args, { cwd: packageDir, stdio: ["ignore", "ignore", "inherit"] })
  return join(packageDir, args[2])
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
