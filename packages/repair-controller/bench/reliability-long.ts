/**
 * The long variants of the reliability suite (docs/reliability.md): NODEMEND_RELIABILITY_LONG=1 over the
 * cluster trials (test/reliability/*.rtest.ts) and the invalid-config matrix (every case through the real
 * binaries), then a table of the figures they recorded. Needs a cluster: NODEMEND_KUBECONFIG=<path>.
 *
 *   NODEMEND_KUBECONFIG=.nodemend/kubeconfig npm run bench:reliability -w @nodemend/repair-controller [-- <test filter>]
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const PKG = fileURLToPath(new URL("..", import.meta.url))
const figures = join(PKG, "../../.nodemend/reliability-figures.jsonl")
mkdirSync(dirname(figures), { recursive: true })
rmSync(figures, { force: true })
const env = {
  ...process.env,
  NODEMEND_RELIABILITY_LONG: "1",
  NODEMEND_RELIABILITY_FIGURES: figures
}
const filter = process.argv.slice(2)
const vitest = (args: string[]) =>
  spawnSync(join(PKG, "../../node_modules/.bin/vitest"), ["run", ...args, ...filter], {
    cwd: PKG,
    env,
    stdio: "inherit"
  }).status ?? 1
const failed =
  vitest(["-c", "vitest.reliability.config.ts"]) + vitest(["test/reliability/invalidConfig.test.ts"])

if (existsSync(figures)) {
  console.log("\nfigures (also in .nodemend/reliability-figures.jsonl):")
  for (const line of readFileSync(figures, "utf8").split("\n").filter(Boolean)) {
    const { name, at: _at, long: _long, ...rest } = JSON.parse(line) as Record<string, unknown>
    console.log(`- ${String(name)}: ${JSON.stringify(rest)}`)
  }
}
process.exit(failed === 0 ? 0 : 1)
