/** The plain manifests in deploy/ that the chart must stay equivalent to. */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { REPO_ROOT } from "../../../tools/cluster/versions.mjs"
import { type KubeObject, parseObjects } from "./helm.ts"

export const DEPLOY_DIR = join(REPO_ROOT, "deploy")

/** Every object in deploy/<dir>/*.yaml, except `*.example.yaml`. */
export const loadManifests = (dir: "agent" | "controller" | "crds"): KubeObject[] =>
  readdirSync(join(DEPLOY_DIR, dir))
    .filter((f) => f.endsWith(".yaml") && !f.endsWith(".example.yaml"))
    .sort()
    .flatMap((f) => parseObjects(readFileSync(join(DEPLOY_DIR, dir, f), "utf8")))
