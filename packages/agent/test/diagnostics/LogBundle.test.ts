import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type Collector, defaultCollectors } from "../../src/diagnostics/Collectors.ts"
import { assembleBundle, ERRORS_FILE, MANIFEST_FILE } from "../../src/diagnostics/LogBundle.ts"
import { expandCategories } from "@nodemend/kube-access/NodeDiagnostic"
import { leakyAgentState, makeHostRoot, plantedValues } from "./fixtures.ts"

let hostRoot: string
let workDir: string
beforeEach(async () => {
  hostRoot = await makeHostRoot()
  workDir = await mkdtemp(join(tmpdir(), "nodemend-work-"))
})
afterEach(async () => {
  await rm(hostRoot, { recursive: true, force: true })
  await rm(workDir, { recursive: true, force: true })
})

const list = (bundle: string) =>
  execFileSync("tar", ["-tzf", bundle], { encoding: "utf8" }).trim().split("\n")
const extract = async (bundle: string, member: string) => {
  const out = join(workDir, "x")
  execFileSync("mkdir", ["-p", out])
  execFileSync("tar", ["-xzf", bundle, "-C", out])
  return readFile(join(out, member), "utf8")
}

describe("assembleBundle", () => {
  it("collects every category from the host root, with no planted secret in the bundle", async () => {
    const bundle = await assembleBundle({
      nodeName: "node-a",
      hostRoot,
      collectors: defaultCollectors({ hostRoot, agentState: leakyAgentState }),
      categories: expandCategories(["All"]),
      workDir
    })
    const names = list(bundle.path)
    for (const f of [
      "node-a/system/meminfo.txt",
      "node-a/system/loadavg.txt",
      "node-a/storage/mounts.txt",
      "node-a/networking/ip-addr.txt",
      "node-a/networking/conntrack.txt",
      "node-a/cni/10-aws.conflist",
      "node-a/cni/99-loopback.conf",
      "node-a/containerd/config.toml",
      "node-a/agent/state.json",
      `node-a/${MANIFEST_FILE}`
    ]) {
      expect(names).toContain(f)
    }
    expect(await extract(bundle.path, "node-a/system/meminfo.txt")).toContain("MemTotal")
    expect(await extract(bundle.path, "node-a/networking/conntrack.txt")).toContain("nf_conntrack_count 1234")
    expect(await extract(bundle.path, "node-a/agent/state.json")).toContain("NvidiaXID79Error")
    // No planted secret anywhere in the (decompressed) archive.
    const raw = gunzipSync(await readFile(bundle.path)).toString("utf8")
    for (const secret of plantedValues()) expect(raw).not.toContain(secret)
    // GPU tools are absent here: skipped, not errors.
    const manifest = JSON.parse(await extract(bundle.path, `node-a/${MANIFEST_FILE}`))
    expect(manifest.collectors.find((c: { name: string }) => c.name === "nvidia-smi").outcome).toBe("skipped")
    expect(names.some((n) => n.startsWith("node-a/gpu/"))).toBe(false)
    // The digest taken while writing is the digest of the file as written.
    const file = await readFile(bundle.path)
    expect(bundle.digest).toEqual({
      sha256: createHash("sha256").update(file).digest("hex"),
      size: file.length
    })
  })

  it("ships the bundle with the error recorded when a collector hangs", async () => {
    const hung: Collector = {
      name: "hung-command",
      category: "System",
      output: "system/hung.txt",
      source: { _tag: "Command", argv: ["sh", "-c", "echo partial; sleep 60 & sleep 60"] },
      timeoutMs: 300
    }
    const hungProvider: Collector = {
      name: "hung-provider",
      category: "Base",
      output: "agent/hung.json",
      source: { _tag: "Provider", get: () => new Promise(() => undefined) },
      timeoutMs: 300
    }
    const bundle = await assembleBundle({
      nodeName: "node-b",
      hostRoot,
      collectors: [
        hung,
        hungProvider,
        ...defaultCollectors({ hostRoot }).filter((c) => c.category === "Base")
      ],
      categories: expandCategories(["Base", "System"]),
      workDir
    })
    expect(bundle.errors.map((e) => e.name).sort()).toEqual(["hung-command", "hung-provider"])
    const errors = await extract(bundle.path, `node-b/${ERRORS_FILE}`)
    expect(errors).toMatch(/hung-command .*timed out after 300 ms/)
    expect(errors).toMatch(/hung-provider .*timed out after 300 ms/)
    expect(await extract(bundle.path, "node-b/system/meminfo.txt")).toContain("MemTotal")
    expect(await extract(bundle.path, "node-b/system/hung.txt")).toContain("partial")
    expect(bundle.totalMs).toBeLessThan(5_000)
  })

  it("runs only the requested categories and records missing required files", async () => {
    await rm(join(hostRoot, "proc/loadavg"))
    const bundle = await assembleBundle({
      nodeName: "node-c",
      hostRoot,
      collectors: defaultCollectors({ hostRoot }),
      categories: expandCategories(["Base"]),
      workDir
    })
    const names = list(bundle.path)
    expect(names.some((n) => n.startsWith("node-c/networking/"))).toBe(false)
    expect(names).toContain(`node-c/${ERRORS_FILE}`)
    expect(bundle.errors.map((e) => e.name)).toEqual(["loadavg"])
  })
})

describe("resolveHostPath", () => {
  it("follows absolute symlinks under the host root and refuses escapes", async () => {
    const { symlink, mkdir, writeFile } = await import("node:fs/promises")
    const { resolveHostPath } = await import("../../src/diagnostics/CollectorRunner.ts")
    await mkdir(join(hostRoot, "usr/lib"), { recursive: true })
    await writeFile(join(hostRoot, "usr/lib/os-release"), "NAME=x\n")
    await rm(join(hostRoot, "etc/os-release"))
    await symlink("/usr/lib/os-release", join(hostRoot, "etc/os-release"))
    await symlink("../../../../../../../../etc/passwd", join(hostRoot, "etc/escape"))
    expect(await resolveHostPath(hostRoot, "etc/os-release")).toBe(join(hostRoot, "usr/lib/os-release"))
    await expect(resolveHostPath(hostRoot, "etc/escape")).rejects.toThrow(/outside the host root/)
  })
})
