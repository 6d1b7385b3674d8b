/**
 * Finds the last released contract in git history, so that editing the catalog and the committed lock
 * together cannot slip a breaking change through without a version bump:
 *   1. the newest tag `reason-codes-vX.Y.Z` reachable from HEAD, else
 *   2. the lock at the merge base of HEAD with main (`NODEMEND_CONTRACT_BASE`, else `origin/main`, else
 *      `main`); when HEAD is on main itself (CI after a merge), main before HEAD: HEAD's first parent.
 * No lock at that commit (the package did not exist yet) means nothing was released.
 */
import { execFileSync } from "node:child_process"
import { compareVersions, type Lock } from "./contract.ts"

export const RELEASE_TAG_PREFIX = "reason-codes-v"
const LOCK_PATH = "api/catalog.lock.json"

export class ReleasedContractError extends Error {
  readonly _tag = "ReleasedContractError"
}

export interface Released {
  readonly lock: Lock
  /** Where it came from, e.g. `tag reason-codes-v1.1.0` or `main at 3f2a91c (merge base)`. */
  readonly from: string
}

const git = (cwd: string, args: readonly string[]): string | undefined => {
  try {
    return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim()
  } catch {
    return undefined
  }
}

const lockAt = (cwd: string, rev: string, prefix: string): Lock | undefined => {
  const text = git(cwd, ["show", `${rev}:${prefix}${LOCK_PATH}`])
  return text === undefined ? undefined : (JSON.parse(text) as Lock)
}

const newestReleaseTag = (cwd: string): string | undefined => {
  const tags = (git(cwd, ["tag", "--list", `${RELEASE_TAG_PREFIX}*`, "--merged", "HEAD"]) ?? "")
    .split("\n")
    .filter((t) => /^reason-codes-v\d+\.\d+\.\d+$/.test(t))
  return tags.sort((a, b) =>
    compareVersions(b.slice(RELEASE_TAG_PREFIX.length), a.slice(RELEASE_TAG_PREFIX.length))
  )[0]
}

/** The released contract for the package in `packageDir`, or undefined when none was released yet. */
export const releasedContract = (
  packageDir: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Released | undefined => {
  const prefix = git(packageDir, ["rev-parse", "--show-prefix"])
  if (prefix === undefined)
    throw new ReleasedContractError(
      `${packageDir} is not in a git repository: the contract check compares with the released contract in git history`
    )
  if (git(packageDir, ["rev-parse", "--is-shallow-repository"]) === "true")
    throw new ReleasedContractError(
      "this is a shallow clone: the contract check needs the history of main (git fetch --unshallow)"
    )
  const tag = newestReleaseTag(packageDir)
  if (tag !== undefined) {
    const lock = lockAt(packageDir, tag, prefix)
    if (lock === undefined) throw new ReleasedContractError(`tag ${tag} has no ${prefix}${LOCK_PATH}`)
    return { lock, from: `tag ${tag}` }
  }
  const candidates = env.NODEMEND_CONTRACT_BASE ? [env.NODEMEND_CONTRACT_BASE] : ["origin/main", "main"]
  const main = candidates.find((ref) =>
    git(packageDir, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])
  )
  if (main === undefined)
    throw new ReleasedContractError(
      `no ${candidates.join(" or ")} to compare with: fetch main, set NODEMEND_CONTRACT_BASE to the branch this ` +
        `change goes into, or tag the last release ${RELEASE_TAG_PREFIX}X.Y.Z`
    )
  const head = git(packageDir, ["rev-parse", "HEAD"])
  const mergeBase = git(packageDir, ["merge-base", "HEAD", main])
  if (head === undefined || mergeBase === undefined)
    throw new ReleasedContractError(`HEAD has no common history with ${main}`)
  if (mergeBase !== head) {
    const lock = lockAt(packageDir, mergeBase, prefix)
    return lock === undefined ? undefined : { lock, from: `${main} at ${mergeBase.slice(0, 9)} (merge base)` }
  }
  // HEAD is on main: the change under test is HEAD itself (and the working tree), released is what came before.
  const parent = git(packageDir, ["rev-parse", "--verify", "--quiet", "HEAD^1"])
  if (parent === undefined) return undefined
  const lock = lockAt(packageDir, parent, prefix)
  return lock === undefined ? undefined : { lock, from: `${main} at ${parent.slice(0, 9)} (before HEAD)` }
}
