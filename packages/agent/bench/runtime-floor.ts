/**
 * The resident memory Node 24 needs for the agent's kind of I/O before any agent code: the same flags and
 * environment as deploy/agent, one keep-alive TLS connection to the API server holding a watch on a Node
 * and making requests, an HTTP server, an inotify watch, child processes, /proc reads. Also the smallest
 * Effect program shaped like the agent (bench/effect-floor-program.ts, bundled like the agent). Compared
 * with the agent (bench/footprint.ts), it says how much of the agent's RSS is the runtime and how much is ours.
 *
 *   node --conditions=source bench/runtime-floor.ts [seconds=30]
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { kubeAccessFromKubeconfig } from "@nodemend/kube-access"
import { DEPLOYED_ENV, spawnNode } from "../test/integration/agent-process.ts"
import {
  createKwokNode,
  DEPLOYED_NODE_FLAGS,
  kubeconfigPath,
  makeClients,
  PACKAGE_DIR,
  processUsage,
  sleep
} from "./agent-harness.ts"

// The program under measurement: plain JavaScript, node: builtins only, loaded as the agent loads them
// (process.getBuiltinModule: an ESM import of node:http would also load undici, ~3 MiB, as the agent avoids).
const FLOOR_PROGRAM = `
const { readFileSync, watch } = process.getBuiltinModule("node:fs")
const { readFile } = process.getBuiltinModule("node:fs/promises")
const https = process.getBuiltinModule("node:https")
const http = process.getBuiltinModule("node:http")
const { execFile } = process.getBuiltinModule("node:child_process")
const [dir, server, node] = process.argv.slice(2)
const tls = { ca: readFileSync(dir + "/ca"), cert: readFileSync(dir + "/cert"), key: readFileSync(dir + "/key"), agent: new https.Agent({ keepAlive: true }) }
const get = (path) => new Promise((ok, fail) => https.get(server + path, tls, (r) => { r.resume(); r.on("end", ok) }).on("error", fail))
https.get(server + "/api/v1/nodes?watch=1&fieldSelector=metadata.name%3D" + node, tls, (r) => r.resume())
http.createServer((_, res) => res.end("ok")).listen(0, "127.0.0.1")
watch(dir, () => {})
setInterval(async () => {
  await get("/api/v1/nodes/" + node)
  await new Promise((ok) => execFile("true", [], ok))
  for (const f of ["/proc/loadavg", "/proc/self/stat", "/proc/meminfo"]) await readFile(f, "utf8")
}, 1000)
`

const seconds = Number(process.argv[2] ?? 30)
const access = kubeAccessFromKubeconfig(kubeconfigPath())
if (access.ca === undefined || access.cert === undefined || access.key === undefined)
  throw new Error("runtime-floor needs a kubeconfig with client certificates (the local cluster's)")
const dir = mkdtempSync(join(tmpdir(), "nodemend-floor-"))
writeFileSync(join(dir, "ca"), access.ca)
writeFileSync(join(dir, "cert"), access.cert)
writeFileSync(join(dir, "key"), access.key)
writeFileSync(join(dir, "floor.mjs"), FLOOR_PROGRAM)
// An ES module like the agent's bundle (an ESM entry starts Node's ESM loader: ~3 MiB over `node -e`).
writeFileSync(join(dir, "bare.mjs"), "setInterval(() => {}, 1000)\n")
execFileSync(
  process.execPath,
  [
    join(PACKAGE_DIR, "../../tools/bundle/bundle.mjs"),
    "bench/effect-floor-program.ts",
    join(dir, "effect.mjs")
  ],
  { cwd: PACKAGE_DIR, stdio: ["ignore", "ignore", "inherit"] }
)
const { core } = makeClients()
const node = `bench-floor-${Date.now().toString(36)}`
await createKwokNode(core, node)
const mib = (b: number) => (b / 2 ** 20).toFixed(1)
const flags = DEPLOYED_NODE_FLAGS.split(" ").filter((f) => f !== "")

try {
  console.log(
    `| Program (deployed flags and environment) | RSS after ${seconds} s (anonymous + file-backed) |`
  )
  console.log("|---|---|")
  for (const [label, argv] of [
    ["bare Node 24 (an ES module with a timer)", [...flags, join(dir, "bare.mjs")]],
    ["the smallest Effect program shaped like the agent (no I/O)", [...flags, join(dir, "effect.mjs")]],
    [
      "the agent's I/O without the agent (no Effect)",
      [...flags, join(dir, "floor.mjs"), dir, access.server, node]
    ]
  ] as const) {
    const run = spawnNode(argv, DEPLOYED_ENV)
    await sleep(seconds * 1000)
    const u = processUsage(run.child.pid!)
    const out = run.output()
    await run.stop()
    if (out.trim() !== "") console.log(out.trim())
    console.log(`| ${label} | ${mib(u.rssBytes)} MiB (${mib(u.anonBytes)} + ${mib(u.fileBytes)}) |`)
  }
} finally {
  await core.deleteNode({ name: node }).catch(() => undefined)
  rmSync(dir, { recursive: true, force: true })
}
