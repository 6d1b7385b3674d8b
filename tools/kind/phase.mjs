// Whether `npm test`'s kind phase runs on this machine. It runs only where it costs no build: root on Linux, a
// container engine (a Docker daemon or podman) and the node image already there (the published one pulled, or the
// local one `kind:up` assembled and cached). A fresh machine (CI) skips it with the reason, and installs nothing.
import { execFileSync } from "node:child_process"
import { dockerRuns, podmanInstalled, storedImage } from "./podman.mjs"
import { PUBLISHED_NODE_IMAGE, imageStamp, localNodeImage } from "./versions.mjs"

/** The decision (pure): { run: true } or { run: false, reason }. */
export function kindPhasePlan({ disabled, platform, root, docker, podman, imageCached }) {
  if (disabled) return { run: false, reason: "NODEMEND_KIND=0" }
  if (platform !== "linux" || !root) return { run: false, reason: "it needs root on Linux" }
  if (!docker && !podman)
    return {
      run: false,
      reason: "no Docker daemon and no podman (npm run kind:up installs podman as root on Debian)"
    }
  if (!imageCached)
    return {
      run: false,
      reason: docker
        ? `${PUBLISHED_NODE_IMAGE} is not pulled (npm run kind:up pulls it)`
        : `the kind node image is not built (npm run kind:up assembles and caches ${localNodeImage()})`
    }
  return { run: true }
}

const dockerImage = (ref) => {
  try {
    execFileSync("docker", ["image", "inspect", ref], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/** Probes this machine (no install, no build) and decides. */
export function probeKindPhase(env = process.env) {
  const root = process.getuid?.() === 0
  const docker = root && dockerRuns()
  const podman = !docker && podmanInstalled()
  const imageCached = docker
    ? dockerImage(PUBLISHED_NODE_IMAGE)
    : podman && imageStamp()?.image === localNodeImage() && storedImage(localNodeImage())
  return kindPhasePlan({
    disabled: env.NODEMEND_KIND === "0",
    platform: process.platform,
    root,
    docker,
    podman,
    imageCached
  })
}
