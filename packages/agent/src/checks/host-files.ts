/**
 * Reads under the host root (`--host-root`, `/host` in the DaemonSet). Files that vanish between listing
 * and reading (a process exits) are normal under /proc: they read as `undefined`, never as an error.
 */
import { Effect } from "effect"
import { readdir, readFile, readlink, stat } from "node:fs/promises"
import { join } from "node:path"

export interface HostFiles {
  readonly root: string
  readonly path: (rel: string) => string
  readonly text: (rel: string) => Effect.Effect<string | undefined>
  readonly bytes: (rel: string) => Effect.Effect<Buffer | undefined>
  readonly list: (rel: string) => Effect.Effect<readonly string[]>
  readonly linkTarget: (rel: string) => Effect.Effect<string | undefined>
  readonly exists: (rel: string) => Effect.Effect<boolean>
  /** Numeric entries of <root>/proc. */
  readonly pids: Effect.Effect<readonly number[]>
}

const orUndefined = <A>(f: () => Promise<A>): Effect.Effect<A | undefined> =>
  Effect.promise(() => f().catch(() => undefined))

export const hostFiles = (root: string): HostFiles => {
  const path = (rel: string) => join(root, rel)
  const list = (rel: string) => orUndefined(() => readdir(path(rel))).pipe(Effect.map((xs) => xs ?? []))
  return {
    root,
    path,
    text: (rel) => orUndefined(() => readFile(path(rel), "utf8")),
    bytes: (rel) => orUndefined(() => readFile(path(rel))),
    list,
    linkTarget: (rel) => orUndefined(() => readlink(path(rel))),
    exists: (rel) => orUndefined(() => stat(path(rel))).pipe(Effect.map((s) => s !== undefined)),
    pids: list("proc").pipe(
      Effect.map((xs) =>
        xs
          .filter((x) => /^[0-9]+$/.test(x))
          .map(Number)
          .sort((a, b) => a - b)
      )
    )
  }
}
