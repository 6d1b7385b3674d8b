#!/usr/bin/env node
// Builds the pinned `helm` v3 CLI from the Go module proxy into ~/.cache/nodemend/helm/<version>/bin
// (under NODEMEND_CACHE_DIR or XDG_CACHE_HOME when set). A no-op when that binary is present.
// The chart tests (packages/deploy-tests) run it; nothing in the product needs helm.
//
//   node tools/helm/build.mjs            build (or verify cache); prints the helm binary's path
//   node tools/helm/build.mjs --print    print the helm binary's path, build nothing
//   node tools/helm/build.mjs --check    exit 0 if the binary is cached, 1 otherwise
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { acquireLock, fmt, goArgs, goEnv, run } from "../cluster/build.mjs"
import { cacheRoot } from "../cluster/versions.mjs"

/** helm.sh/helm/v3 release; changing it builds into a new cache directory. */
export const HELM_VERSION = "v3.22.0"

function log(msg) {
  process.stderr.write(`[helm:build] ${msg}\n`)
}

/** ~/.cache/nodemend/helm/<version>/bin/helm, next to the cluster binaries' cache. */
export function helmPath() {
  if (process.env.NODEMEND_HELM) return process.env.NODEMEND_HELM
  return join(dirname(cacheRoot()), "helm", HELM_VERSION, "bin", "helm")
}

export function isCached(path = helmPath()) {
  return existsSync(path) && statSync(path).size > 0
}

/**
 * What helm's Makefile stamps: its version, and the Kubernetes version that `helm template`/`lint` assume
 * (from the client-go it requires; unstamped, helm assumes v1.20 and rejects charts needing newer).
 */
function helmLdflags(env) {
  const info = JSON.parse(
    execFileSync("go", ["mod", "download", "-json", `helm.sh/helm/v3@${HELM_VERSION}`], {
      env,
      encoding: "utf8"
    })
  )
  const clientGo = /k8s\.io\/client-go v0\.(\d+)\./u.exec(readFileSync(info.GoMod, "utf8"))
  if (!clientGo) throw new Error(`no k8s.io/client-go requirement in ${info.GoMod}`)
  return [
    "-s",
    "-w",
    `-X=helm.sh/helm/v3/internal/version.version=${HELM_VERSION}`,
    ...["pkg/lint/rules", "pkg/chartutil"].flatMap((pkg) => [
      `-X=helm.sh/helm/v3/${pkg}.k8sVersionMajor=1`,
      `-X=helm.sh/helm/v3/${pkg}.k8sVersionMinor=${clientGo[1]}`
    ])
  ].join(" ")
}

export async function build() {
  const path = helmPath()
  if (isCached(path)) {
    log(`cache valid: ${path}`)
    return path
  }
  if (process.env.NODEMEND_HELM) throw new Error(`NODEMEND_HELM=${path} does not exist`)
  const versionDir = dirname(dirname(path))
  mkdirSync(dirname(versionDir), { recursive: true })
  const lockDir = `${versionDir}.lock`
  await acquireLock(lockDir, log)
  const release = () => rmSync(lockDir, { recursive: true, force: true })
  process.on("exit", release)
  try {
    if (isCached(path)) return path
    try {
      log(`using ${execFileSync("go", ["version"], { env: goEnv(), encoding: "utf8" }).trim()}`)
    } catch (e) {
      throw new Error(
        `cannot run \`go version\` (${e.message.split("\n")[0]}). Install Go >= 1.21, or set NODEMEND_HELM to a helm v3 binary.`
      )
    }
    const tmp = join(versionDir, "bin.partial")
    rmSync(tmp, { recursive: true, force: true })
    mkdirSync(tmp, { recursive: true })
    const env = { ...goEnv(), GOFLAGS: `${goEnv().GOFLAGS} -mod=mod` }
    log(`building helm ${HELM_VERSION} into ${dirname(path)} (progress every 20 s)`)
    const ms = await run(
      "helm",
      "go",
      goArgs("install", [`helm.sh/helm/v3/cmd/helm@${HELM_VERSION}`], helmLdflags(env)),
      {
        cwd: versionDir,
        // -mod=mod: resolve the module's own requirements (no go.mod of ours to read).
        env: { ...env, GOBIN: tmp }
      },
      log
    )
    rmSync(dirname(path), { recursive: true, force: true })
    renameSync(tmp, dirname(path))
    log(`done in ${fmt(ms)}: ${path}`)
    return path
  } finally {
    release()
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = process.argv[2]
  if (arg === "--print") {
    process.stdout.write(`${helmPath()}\n`)
  } else if (arg === "--check") {
    process.exit(isCached() ? 0 : 1)
  } else {
    build().then(
      (path) => process.stdout.write(`${path}\n`),
      (e) => {
        log(String(e?.stack ?? e))
        process.exit(1)
      }
    )
  }
}
