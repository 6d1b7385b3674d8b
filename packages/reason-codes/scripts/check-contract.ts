// check:contract: the catalog may change from the last released contract (git tag or main, see released.ts)
// only with the version bump and CHANGELOG section the change needs, and api/catalog.lock.json must record it.
// lock:update (--update) rewrites the lock, but only when those rules are met.
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { checkProblems, type Lock, transitionProblems } from "./contract.ts"
import { ReleasedContractError, releasedContract } from "./released.ts"
import { currentContract } from "./sources.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const lockPath = `${root}api/catalog.lock.json`
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { version: string }
const changelog = readFileSync(`${root}CHANGELOG.md`, "utf8")
const committed = JSON.parse(readFileSync(lockPath, "utf8")) as Lock
const current = currentContract(pkg.version)

const fail = (title: string, problems: readonly string[]): never => {
  console.error(`${title}:\n- ${problems.join("\n- ")}`)
  process.exit(1)
}

let released: ReturnType<typeof releasedContract>
try {
  released = releasedContract(root)
} catch (e) {
  if (e instanceof ReleasedContractError) fail("reason-code contract cannot be checked", [e.message])
  throw e
}
const releasedText = released ? `${released.from} (${released.lock.version})` : "nothing released yet"

if (process.argv.includes("--update")) {
  // Without a release, the committed lock is the baseline: it still may not move without the bump.
  const base = released ?? { lock: committed, from: "api/catalog.lock.json" }
  const problems = transitionProblems(base.lock, current, changelog, base.from)
  if (problems.length > 0) fail("lock:update refused", problems)
  writeFileSync(lockPath, `${JSON.stringify(current, null, 2)}\n`)
  console.log(
    `api/catalog.lock.json updated to ${pkg.version} (${current.entries.length} entries); released: ${releasedText}`
  )
} else {
  const problems = checkProblems({ committed, current, released, changelog })
  if (problems.length > 0) fail("reason-code contract violated", problems)
  console.log(
    `reason-code contract OK: ${current.entries.length} entries at ${pkg.version} match api/catalog.lock.json; released: ${releasedText}`
  )
}
