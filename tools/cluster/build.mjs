#!/usr/bin/env node
// Builds the pinned control-plane binaries (kube-apiserver, kube-controller-manager, kube-scheduler,
// etcd, kwok) from the Go module proxy into ~/.cache/nodemend/cluster/<key>/bin.
// A no-op when the cache for the current key is complete.
//
//   node tools/cluster/build.mjs            build (or verify cache)
//   node tools/cluster/build.mjs --print    print the bin directory, build nothing
//   node tools/cluster/build.mjs --check    exit 0 if the cache is complete, 1 otherwise
import { execFileSync, spawn } from "node:child_process"
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { COMPONENTS, STAMP_FILE, TOOLS_DIR, VERSIONS, binDir, cacheKey } from "./versions.mjs"

const K8S_MINOR = VERSIONS.kubernetes.replace(/^v/, "").split(".")
const VERSION_PKG = "k8s.io/component-base/version"

function log(msg) {
  process.stderr.write(`[cluster:build] ${msg}\n`)
}

export function fmt(ms) {
  const s = Math.round(ms / 1000)
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`
}

export function isCached(dir = binDir()) {
  const stamp = join(dirname(dir), STAMP_FILE)
  if (!existsSync(stamp)) return false
  try {
    const data = JSON.parse(readFileSync(stamp, "utf8"))
    if (data.key !== cacheKey()) return false
  } catch {
    return false
  }
  return COMPONENTS.every((c) => existsSync(join(dir, c)) && statSync(join(dir, c)).size > 0)
}

/** Runs a command, streaming a progress line every 20 s (package count from `go build -v`) through `say`. */
export function run(label, cmd, args, opts, say = log) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    let pkgs = 0
    let tail = ""
    const child = spawn(cmd, args, { ...opts, stdio: ["ignore", "pipe", "pipe"] })
    const onData = (buf) => {
      const text = buf.toString()
      tail = (tail + text).slice(-8000)
      for (const line of text.split("\n")) if (line && !line.startsWith("go: downloading")) pkgs++
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    const timer = setInterval(
      () => say(`  ${label}: ${fmt(Date.now() - started)} elapsed, ${pkgs} packages compiled`),
      20_000
    )
    child.on("error", (e) => {
      clearInterval(timer)
      reject(e)
    })
    child.on("close", (code) => {
      clearInterval(timer)
      if (code === 0) resolve(Date.now() - started)
      else reject(new Error(`${label} failed (exit ${code}):\n${tail}`))
    })
  })
}

export function goEnv() {
  return {
    ...process.env,
    CGO_ENABLED: process.env.CGO_ENABLED ?? "0",
    GOFLAGS: `${process.env.GOFLAGS ?? ""} -buildvcs=false`.trim(),
    // The go.mod files ask for go 1.26; an older local toolchain auto-downloads the right one.
    GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? "auto"
  }
}

/**
 * A `go build` or `go install` command line as every cache builds: NODEMEND_GO_BUILD_JOBS (2) jobs, -v (the package
 * count `run` reports), -trimpath, `ldflags` (-s -w: no symbol tables), then `rest` (-o, the packages or module).
 */
export function goArgs(verb, rest, ldflags = "-s -w") {
  return [
    verb,
    "-p",
    process.env.NODEMEND_GO_BUILD_JOBS ?? "2",
    "-v",
    "-trimpath",
    `-ldflags=${ldflags}`,
    ...rest
  ]
}

/** Main packages that are not our thin mains in ./cmd: kwok's own (a `tool` of the control plane's module). */
const MAIN_PACKAGE = { kwok: "sigs.k8s.io/kwok/cmd/kwok" }

/** `go build` of commands (./cmd/<name> of the module in cwd, or MAIN_PACKAGE's) into `outDir`, the version stamped. */
export function k8sBuildArgs(outDir, commands) {
  return goArgs(
    "build",
    ["-o", `${outDir}/`, ...commands.map((c) => MAIN_PACKAGE[c] ?? `./cmd/${c}`)],
    k8sLdflags()
  )
}

/** -s -w and the Kubernetes version stamped into component-base/version, as upstream's release builds do. */
export function k8sLdflags() {
  const [major, minor] = K8S_MINOR
  const x = {
    gitMajor: major,
    gitMinor: minor,
    gitVersion: VERSIONS.kubernetes,
    gitCommit: `module-proxy-${VERSIONS.kubernetes}`,
    gitTreeState: "clean",
    buildDate: new Date().toISOString().replace(/\.\d+Z$/, "Z")
  }
  return ["-s", "-w", ...Object.entries(x).map(([k, v]) => `-X=${VERSION_PKG}.${k}=${v}`)].join(" ")
}

/** A cross-process build lock (a directory holding the builder's pid); a dead holder's lock is taken over. */
export async function acquireLock(lockDir, say = log) {
  for (;;) {
    try {
      mkdirSync(lockDir)
      writeFileSync(join(lockDir, "pid"), String(process.pid))
      return
    } catch (e) {
      if (e.code !== "EEXIST") throw e
      let holder = 0
      try {
        holder = Number(readFileSync(join(lockDir, "pid"), "utf8"))
      } catch {}
      let alive = false
      if (holder > 0) {
        try {
          process.kill(holder, 0)
          alive = true
        } catch {}
      }
      if (!alive) {
        rmSync(lockDir, { recursive: true, force: true })
        continue
      }
      say(`another build (pid ${holder}) holds ${lockDir}; waiting...`)
      await new Promise((r) => setTimeout(r, 5000))
    }
  }
}

/**
 * Removes the other cache keys of one kind (`prefix`: `k8s-`, `karpenter-`; hundreds of MB each) next to `keyDir`.
 * Running processes keep their unlinked binaries. `NODEMEND_CLUSTER_KEEP_OLD` keeps them.
 */
export function pruneOtherKeys(keyDir, prefix, say = log) {
  if (process.env.NODEMEND_CLUSTER_KEEP_OLD) return
  const root = dirname(keyDir)
  for (const d of readdirSync(root)) {
    const full = join(root, d)
    if (full === keyDir || !d.startsWith(prefix) || d.endsWith(".lock")) continue
    rmSync(full, { recursive: true, force: true })
    say(`removed old cache ${full}`)
  }
}

export async function build() {
  const dir = binDir()
  if (isCached(dir)) {
    log(`cache valid: ${dir}`)
    return dir
  }
  if (process.env.NODEMEND_CLUSTER_BIN_DIR) {
    throw new Error(`NODEMEND_CLUSTER_BIN_DIR=${dir} is missing binaries (${COMPONENTS.join(", ")})`)
  }
  const keyDir = dirname(dir)
  mkdirSync(dirname(keyDir), { recursive: true })
  const lockDir = `${keyDir}.lock`
  await acquireLock(lockDir)
  const release = () => rmSync(lockDir, { recursive: true, force: true })
  process.on("exit", release)
  try {
    if (isCached(dir)) {
      log(`cache valid (built by another process): ${dir}`)
      return dir
    }
    try {
      log(`using ${execFileSync("go", ["version"], { env: goEnv(), encoding: "utf8" }).trim()}`)
    } catch (e) {
      throw new Error(
        `cannot run \`go version\` (${e.message.split("\n")[0]}). Install Go >= 1.21 (it fetches the 1.26 toolchain ` +
          "the modules need from the Go module proxy; GOTOOLCHAIN=auto) or set NODEMEND_CLUSTER_BIN_DIR to prebuilt binaries."
      )
    }
    const tmp = join(keyDir, "bin.partial")
    mkdirSync(tmp, { recursive: true })
    const env = goEnv()
    const t0 = Date.now()
    log(`building into ${dir} (cold build of Kubernetes takes a while; progress every 20 s)`)
    // One go build of all five (one module, one action graph): the packages Kubernetes, etcd and kwok share compile
    // once, and each link overlaps the other compiles (docs/adr/0016-one-go-module-for-the-control-plane.md).
    const todo = COMPONENTS.filter((c) => !existsSync(join(tmp, c)))
    log(`${todo.join(", ")}...`)
    const ms = await run("control plane", "go", k8sBuildArgs(tmp, todo), { cwd: TOOLS_DIR, env })
    log(`${todo.join(", ")} done in ${fmt(ms)}`)
    rmSync(dir, { recursive: true, force: true })
    renameSync(tmp, dir)
    const total = Date.now() - t0
    writeFileSync(
      join(keyDir, STAMP_FILE),
      `${JSON.stringify({ key: basename(keyDir), versions: VERSIONS, builtAt: new Date().toISOString(), totalSeconds: Math.round(total / 1000) }, null, 2)}\n`
    )
    log(`done in ${fmt(total)}: ${dir}`)
    pruneOtherKeys(keyDir, "k8s-")
    return dir
  } finally {
    release()
  }
}

/** A cached build's command line: `--print` its directory, `--check` exit 0 when cached, else build (or verify). */
export function cacheCommand(moduleUrl, { dir, cached, build: buildIt, say = log }) {
  if (!process.argv[1] || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return
  const arg = process.argv[2]
  if (arg === "--print") process.stdout.write(`${dir()}\n`)
  else if (arg === "--check") process.exit(cached() ? 0 : 1)
  else
    buildIt().then(
      (d) => process.stdout.write(`${d}\n`),
      (e) => {
        say(String(e?.stack ?? e))
        process.exit(1)
      }
    )
}

cacheCommand(import.meta.url, { dir: binDir, cached: () => isCached(), build })
