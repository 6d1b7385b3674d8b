// What the kernel shows of the host's mounts and cgroups, for the tools that undo what a node did to the host:
// the real node's down (realnode.mjs) and kind's (tools/kind/host.mjs).
import { existsSync, readFileSync, readdirSync, rmdirSync } from "node:fs"
import { join } from "node:path"

/** Mount points at or under any of `dirs`, from this process's mountinfo, deepest first. */
export function mountsUnder(dirs) {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[4]?.replace(/\\040/g, " "))
    .filter((m) => m && dirs.some((d) => m === d || m.startsWith(`${d}/`)))
    .sort((a, b) => b.length - a.length)
}

/** Removes a cgroup directory tree bottom-up (kills nothing: its tasks are gone by then). */
export function removeCgroupTree(dir) {
  if (!existsSync(dir)) return
  for (const e of readdirSync(dir, { withFileTypes: true }))
    if (e.isDirectory()) removeCgroupTree(join(dir, e.name))
  try {
    rmdirSync(dir)
  } catch {}
}
