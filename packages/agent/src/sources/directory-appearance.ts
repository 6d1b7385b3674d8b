/**
 * Waits for a directory that does not exist yet, without polling: watches its nearest existing ancestor
 * for the next path component and steps down as components appear. A log directory can be missing for
 * the agent's whole life (the VPC CNI's /var/log/aws-routed-eni on nodes with another CNI) or until the
 * kubelet starts (/var/log/pods); a 250 ms poll of each such path costs an idle agent four wake-ups a
 * second per source. Only when no ancestor can be watched does it poll.
 */
import { type FSWatcher, statSync, watch } from "node:fs"
import { basename, dirname } from "node:path"
import { after, type Timer } from "./line-source.ts"

export interface DirectoryAppearance {
  readonly stop: () => void
}

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** Calls `onExists` once, as soon as `dir` is a directory (at once if it already is). */
export const whenDirectoryExists = (dir: string, onExists: () => void, pollMs = 250): DirectoryAppearance => {
  let watcher: FSWatcher | undefined
  let timer: Timer | undefined
  let stopped = false
  const stop = () => {
    stopped = true
    watcher?.close()
    watcher = undefined
    timer?.stop()
  }
  const poll = () => {
    timer = after(pollMs, arm)
  }
  function arm(): void {
    watcher?.close()
    watcher = undefined
    if (stopped) return
    if (isDirectory(dir)) {
      stop()
      onExists()
      return
    }
    // The nearest existing ancestor and the name of its child on the way to `dir`.
    let child = dir
    let ancestor = dirname(dir)
    while (!isDirectory(ancestor) && dirname(ancestor) !== ancestor) {
      child = ancestor
      ancestor = dirname(ancestor)
    }
    const next = basename(child)
    try {
      const w = watch(ancestor, { persistent: false }, (_event, filename) => {
        if (filename === null || String(filename) === next) arm()
      })
      w.on("error", () => {
        w.close()
        if (watcher === w) watcher = undefined
        poll()
      })
      watcher = w
    } catch {
      poll()
      return
    }
    // Created between the check above and the watch: no event will come for it.
    if (isDirectory(child)) arm()
  }
  arm()
  return { stop }
}
