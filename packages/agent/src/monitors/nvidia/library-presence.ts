/**
 * Whether this node could load DCGM or NVML at all, checked on the filesystem before anything loads
 * koffi: on the (many) nodes without NVIDIA hardware or libraries the agent never loads koffi or the
 * monitor's code (~7 MiB of resident memory). The dynamic loader's own search is what decides in the end;
 * this only has to find every place it would look, so it errs towards "present".
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { isAbsolute, join } from "node:path"

/** Where glibc's loader and the NVIDIA container toolkit put the libraries (besides ld.so.conf). */
const STANDARD_DIRS = [
  "/lib",
  "/lib64",
  "/usr/lib",
  "/usr/lib64",
  "/lib/x86_64-linux-gnu",
  "/usr/lib/x86_64-linux-gnu",
  "/lib/aarch64-linux-gnu",
  "/usr/lib/aarch64-linux-gnu",
  "/usr/local/nvidia/lib64",
  "/usr/local/cuda/lib64"
]

/** Directories named in /etc/ld.so.conf and the files it includes (one level of `include`). */
const ldSoConfDirs = (root: string): string[] => {
  const read = (path: string): string[] => {
    try {
      return readFileSync(path, "utf8").split("\n")
    } catch {
      return []
    }
  }
  const dirs: string[] = []
  const lines = read(join(root, "etc/ld.so.conf"))
  let confD: string[] = []
  try {
    confD = readdirSync(join(root, "etc/ld.so.conf.d")).filter((f) => f.endsWith(".conf"))
  } catch {
    confD = []
  }
  for (const line of [...lines, ...confD.flatMap((f) => read(join(root, "etc/ld.so.conf.d", f)))]) {
    const l = line.trim()
    if (l.startsWith("/")) dirs.push(l)
  }
  return dirs
}

/**
 * A library named by path exists; a bare soname (`libnvidia-ml.so.1`) is found in LD_LIBRARY_PATH, a
 * directory of ld.so.conf or a standard directory. `root` is this process's `/` (tests: a temp dir).
 */
export const libraryPresent = (
  library: string,
  env: NodeJS.ProcessEnv = process.env,
  root = "/"
): boolean => {
  if (library.includes("/")) return existsSync(isAbsolute(library) ? join(root, library) : library)
  const dirs = [
    ...(env.LD_LIBRARY_PATH ?? "").split(":").filter((d) => d !== ""),
    ...ldSoConfDirs(root),
    ...STANDARD_DIRS
  ]
  return dirs.some((d) => existsSync(join(root, d, library)))
}
