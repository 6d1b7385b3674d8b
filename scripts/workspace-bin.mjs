/**
 * The workspace packages' `bin` entries (`node_modules/.bin/nodemend-*`, `npx nodemend-agent ...`) start
 * here, on whichever `node` is first on PATH (often the system's, which may be older than 24). This runs the
 * package's TypeScript entry on the repository's Node 24 (`node_modules/node`) with the `source` export
 * condition, so the bins work right after `npm ci`, without `npm run build`. The shipped artefacts are the
 * bundles (`npm run build`); this is for the working tree.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const NODE_24 = fileURLToPath(new URL("../node_modules/node/bin/node", import.meta.url))

/** Runs `entry` (a file URL) with the process's arguments; exits as it exits, forwarding signals. */
export const runFromSource = (entry) => {
  const node = existsSync(NODE_24) ? NODE_24 : process.execPath
  const child = spawn(node, ["--conditions=source", fileURLToPath(entry), ...process.argv.slice(2)], {
    stdio: "inherit"
  })
  const forward = (signal) => child.kill(signal)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, forward)
  child.on("error", (e) => {
    process.stderr.write(`${e.message}\n`)
    process.exit(1)
  })
  child.on("exit", (code, signal) => {
    if (signal) {
      for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.off(s, forward)
      process.kill(process.pid, signal)
    } else process.exit(code ?? 1)
  })
}
