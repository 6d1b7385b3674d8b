/**
 * Compiles the C test doubles with the machine's cc into a temp dir, under the vendor SONAMEs
 * (libdcgm.so.4, libnvidia-ml.so.1). Output is cached by a hash of the sources; concurrent builders
 * race safely (each builds into its own dir, then renames).
 */
import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const HERE = dirname(fileURLToPath(import.meta.url))
const SOURCES = ["vendor_layouts.h", "dcgm_double.c", "nvml_double.c", "dcgm3_double.c"]

export interface GpuDoubles {
  readonly dir: string
  readonly dcgm: string
  readonly nvml: string
  /** A DCGM 3.x-shaped libdcgm (legacy policy API only), for the version-mismatch path. */
  readonly dcgm3: string
}

export const buildGpuDoubles = (): GpuDoubles => {
  const hash = createHash("sha256")
  for (const f of SOURCES) hash.update(readFileSync(join(HERE, f)))
  const dir = join(tmpdir(), `nodemend-gpu-doubles-${hash.digest("hex").slice(0, 16)}`)
  const result = {
    dir,
    dcgm: join(dir, "libdcgm.so.4"),
    nvml: join(dir, "libnvidia-ml.so.1"),
    dcgm3: join(dir, "dcgm3", "libdcgm.so.4")
  }
  if (existsSync(result.dcgm) && existsSync(result.nvml) && existsSync(result.dcgm3)) return result
  const work = mkdtempSync(join(tmpdir(), "nodemend-gpu-doubles-build-"))
  const cc = process.env.CC ?? "cc"
  const flags = [
    "-std=c11",
    "-D_GNU_SOURCE",
    "-O1",
    "-g",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-shared",
    "-fPIC",
    "-pthread"
  ]
  execFileSync(
    cc,
    [...flags, "-Wl,-soname,libdcgm.so.4", "-o", join(work, "libdcgm.so.4"), join(HERE, "dcgm_double.c")],
    {
      stdio: "inherit"
    }
  )
  execFileSync(
    cc,
    [
      ...flags,
      "-Wl,-soname,libnvidia-ml.so.1",
      "-o",
      join(work, "libnvidia-ml.so.1"),
      join(HERE, "nvml_double.c")
    ],
    { stdio: "inherit" }
  )
  mkdirSync(join(work, "dcgm3"))
  execFileSync(
    cc,
    [
      ...flags,
      "-Wl,-soname,libdcgm.so.4",
      "-o",
      join(work, "dcgm3", "libdcgm.so.4"),
      join(HERE, "dcgm3_double.c")
    ],
    { stdio: "inherit" }
  )
  try {
    renameSync(work, dir)
  } catch {
    // another worker won the race; its build is identical
    rmSync(work, { recursive: true, force: true })
  }
  return result
}
