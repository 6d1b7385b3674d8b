/** Where a running demo keeps its state (`fleet.json`: hosts, pids, URLs); `nodemend inject` reads it. */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"

/** `NODEMEND_DEMO_DIR` points `nodemend inject` at another run (the scenario's is .nodemend/scenario). */
export const DEMO_DIR = process.env.NODEMEND_DEMO_DIR || join(REPO_ROOT, ".nodemend", "demo")

export const readFleetState = (dir = DEMO_DIR) => {
  const file = join(dir, "fleet.json")
  if (!existsSync(file)) return undefined
  return JSON.parse(readFileSync(file, "utf8"))
}
