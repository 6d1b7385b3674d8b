import { lstatSync, readFileSync, readlinkSync } from "node:fs"
import { isAbsolute, join, normalize } from "node:path"

/**
 * A file the kubelet wrote into a volume, read without following its symlinks. The kubelet's atomic writer
 * publishes `token -> ..data/token` and `..data -> ..<timestamp>` as links owned by the pod's user inside a
 * sticky, world-writable directory, and where `fs.protected_symlinks = 1` (every stock Debian or systemd host)
 * the kernel refuses root following them. So each link is read (readlink is no follow) and resolved inside the
 * volume by hand; a target outside it is refused.
 */
export const readVolumeFile = (volume: string, name: string): string => {
  let rel = name
  for (let hops = 0; hops < 8; hops++) {
    const parts = rel.split("/")
    let resolved = ""
    let linked = false
    for (const [i, part] of parts.entries()) {
      const path = join(volume, resolved, part)
      if (!lstatSync(path).isSymbolicLink()) {
        resolved = join(resolved, part)
        continue
      }
      const target = readlinkSync(path)
      const next = normalize(join(resolved, target, ...parts.slice(i + 1)))
      if (isAbsolute(target) || next === ".." || next.startsWith("../"))
        throw new Error(`${path} points outside its volume (${target})`)
      rel = next
      linked = true
      break
    }
    if (!linked) return readFileSync(join(volume, resolved), "utf8")
  }
  throw new Error(`${join(volume, name)}: too many symlinks`)
}
