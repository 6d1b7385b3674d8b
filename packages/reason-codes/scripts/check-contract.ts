// check:contract — fails when the catalog breaks the committed lock without the required version bump.
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { CATALOG } from "../src/catalog.ts"
import type { CatalogEntry } from "../src/types.ts"
import { checkProblems, type Lock, makeLock, transitionProblems } from "./contract.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const lockPath = `${root}api/catalog.lock.json`
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { version: string }
const changelog = readFileSync(`${root}CHANGELOG.md`, "utf8")
const catalog = CATALOG as readonly CatalogEntry[]
const lock = JSON.parse(readFileSync(lockPath, "utf8")) as Lock

if (process.argv.includes("--update")) {
  const problems = transitionProblems(lock, catalog, pkg.version, changelog)
  if (problems.length > 0) {
    console.error(`lock:update refused:\n- ${problems.join("\n- ")}`)
    process.exit(1)
  }
  writeFileSync(lockPath, `${JSON.stringify(makeLock(pkg.version, catalog), null, 2)}\n`)
  console.log(`api/catalog.lock.json updated to ${pkg.version} (${catalog.length} entries)`)
} else {
  const problems = checkProblems(lock, catalog, pkg.version, changelog)
  if (problems.length > 0) {
    console.error(`reason-code contract violated:\n- ${problems.join("\n- ")}`)
    process.exit(1)
  }
  console.log(
    `reason-code contract OK: ${catalog.length} entries match api/catalog.lock.json at ${lock.version}`
  )
}
