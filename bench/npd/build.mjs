#!/usr/bin/env node
// Builds node-problem-detector (the pinned release) from the Go module proxy into
// ~/.cache/nodemend/npd/<version>/bin/node-problem-detector (next to the cluster binaries' cache), for the
// side-by-side bench (bench/npd/side-by-side.ts). A no-op when that binary is present.
//
//   node bench/npd/build.mjs            build (or verify cache); prints the binary's path
//   node bench/npd/build.mjs --print    print the binary's path, build nothing
//
// `go install module@version` is not used: it reads the module's version list for deprecations, which
// the proxy here refuses (403); the release's source comes with `go mod download` and is built in place.
// As upstream's default Linux build (its Makefile's ENABLE_JOURNALD=1): CGO on and the `journald` tag, so the
// journald plugin (systemd-monitor.json) is in. That plugin (go-systemd's sdjournal) dlopens libsystemd.so.0 at
// run time and needs only the types and constants of its headers to compile; sd-journal-abi/ carries those, so
// the libsystemd-dev package is not needed. The cache directory is named for that build (an earlier CGO-off
// build of the same version lives next to it, without the plugin).
import { execFileSync } from "node:child_process"
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { acquireLock, fmt, goEnv, run } from "../../tools/cluster/build.mjs"
import { cacheRoot } from "../../tools/cluster/versions.mjs"

export const NPD_VERSION = "v1.36.0"
const MODULE = "k8s.io/node-problem-detector"

const log = (msg) => process.stderr.write(`[npd:build] ${msg}\n`)

export const npdDir = () => join(dirname(cacheRoot()), "npd", `${NPD_VERSION}-journald`)
export const npdPath = () => join(npdDir(), "bin", "node-problem-detector")
/** The release's shipped configs (config/kernel-monitor.json ...), kept next to the binary. */
export const npdConfigDir = () => join(npdDir(), "config")

const isCached = () => existsSync(npdPath()) && statSync(npdPath()).size > 0

const chmodTree = (dir) => {
  chmodSync(dir, 0o755)
  for (const e of readdirSync(dir, { withFileTypes: true }))
    e.isDirectory() ? chmodTree(join(dir, e.name)) : chmodSync(join(dir, e.name), 0o644)
}

export async function build() {
  if (isCached()) {
    log(`cache valid: ${npdPath()}`)
    return npdPath()
  }
  const dir = npdDir()
  mkdirSync(dirname(dir), { recursive: true })
  const lockDir = `${dir}.lock`
  await acquireLock(lockDir, log)
  const release = () => rmSync(lockDir, { recursive: true, force: true })
  process.on("exit", release)
  try {
    if (isCached()) return npdPath()
    const abiHeaders = fileURLToPath(new URL("./sd-journal-abi", import.meta.url))
    const env = { ...goEnv(), CGO_ENABLED: "1", CGO_CFLAGS: `-O2 -I${abiHeaders}` }
    const info = JSON.parse(
      execFileSync("go", ["mod", "download", "-json", `${MODULE}@${NPD_VERSION}`], { env, encoding: "utf8" })
    )
    const src = `${dir}.src`
    rmSync(src, { recursive: true, force: true })
    cpSync(info.Dir, src, { recursive: true })
    chmodTree(src) // the module cache is read-only
    const tmp = join(dir, "bin.partial")
    rmSync(tmp, { recursive: true, force: true })
    mkdirSync(tmp, { recursive: true })
    log(`building node-problem-detector ${NPD_VERSION} (progress every 20 s)`)
    const ms = await run(
      "npd",
      "go",
      [
        "build",
        "-p",
        process.env.NODEMEND_GO_BUILD_JOBS ?? "2",
        "-v",
        "-trimpath",
        "-tags",
        "journald",
        `-ldflags=-s -w -X ${MODULE}/pkg/version.version=${NPD_VERSION}`,
        "-o",
        join(tmp, "node-problem-detector"),
        "./cmd/nodeproblemdetector"
      ],
      { cwd: src, env },
      log
    )
    rmSync(join(dir, "bin"), { recursive: true, force: true })
    renameSync(tmp, join(dir, "bin"))
    rmSync(npdConfigDir(), { recursive: true, force: true })
    cpSync(join(src, "config"), npdConfigDir(), { recursive: true })
    rmSync(src, { recursive: true, force: true })
    log(`done in ${fmt(ms)}: ${npdPath()}`)
    return npdPath()
  } finally {
    release()
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === "--print") process.stdout.write(`${npdPath()}\n`)
  else
    build().then(
      (path) => process.stdout.write(`${path}\n`),
      (e) => {
        log(String(e?.stack ?? e))
        process.exit(1)
      }
    )
}
