import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { libraryPresent } from "../../src/monitors/nvidia/library-presence.ts"

describe("libraryPresent", () => {
  const root = mkdtempSync(join(tmpdir(), "nodemend-libs-"))
  const put = (rel: string, content = "") => {
    mkdirSync(join(root, rel, ".."), { recursive: true })
    writeFileSync(join(root, rel), content)
  }
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it("finds a soname in a standard directory, an ld.so.conf.d directory or LD_LIBRARY_PATH", () => {
    expect(libraryPresent("libnvidia-ml.so.1", {}, root)).toBe(false)
    put("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1")
    expect(libraryPresent("libnvidia-ml.so.1", {}, root)).toBe(true)

    expect(libraryPresent("libdcgm.so.4", {}, root)).toBe(false)
    put("etc/ld.so.conf.d/dcgm.conf", "# DCGM\n/opt/datacenter-gpu-manager/lib\n")
    put("opt/datacenter-gpu-manager/lib/libdcgm.so.4")
    expect(libraryPresent("libdcgm.so.4", {}, root)).toBe(true)

    put("custom/libfoo.so")
    expect(libraryPresent("libfoo.so", {}, root)).toBe(false)
    expect(libraryPresent("libfoo.so", { LD_LIBRARY_PATH: "/nothing:/custom" }, root)).toBe(true)
  })

  it("checks a configured path as it is", () => {
    put("drivers/libnvidia-ml.so.1")
    expect(libraryPresent("/drivers/libnvidia-ml.so.1", {}, root)).toBe(true)
    expect(libraryPresent("/nonexistent/libdcgm.so.4", {}, root)).toBe(false)
  })
})
