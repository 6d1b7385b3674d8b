// The Go modules of the local cluster (docs/adr/0016-one-go-module-for-the-control-plane.md): the real node's and
// the kind node image's modules build what the control plane's does at the same versions, so their builds reuse
// its compiled packages, and the versions the cache key names are the ones go.mod builds.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { REPO_ROOT, VERSIONS } from "../../../tools/cluster/versions.mjs"

const read = (path: string) => readFileSync(join(REPO_ROOT, "tools", path), "utf8")

/** A go.mod's `require` and `replace` lines as module path -> version (a replace's target version). */
const goModVersions = (text: string) => {
  const required = new Map<string, string>()
  const replaced = new Map<string, string>()
  let block: "require" | "replace" | undefined
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\/\/.*$/, "").trim()
    const opened = /^(require|replace)\s*\($/.exec(line)
    if (opened) block = opened[1] as "require" | "replace"
    else if (line === ")") block = undefined
    else {
      const single = /^(require|replace)\s+(.+)$/.exec(line)
      const kind = single ? (single[1] as "require" | "replace") : block
      const body = single ? single[2]! : line
      if (kind === "require" && body) {
        const [path, version] = body.split(/\s+/)
        required.set(path!, version!)
      } else if (kind === "replace" && body) {
        const [from, target] = body.split("=>").map((s) => s.trim().split(/\s+/))
        replaced.set(from![0]!, target![1] ?? target![0]!)
      }
    }
  }
  return { required, replaced }
}

/** What a go.mod builds each module at: the replacement's version where it replaces one, else the required one. */
const effective = (text: string) => {
  const { required, replaced } = goModVersions(text)
  return new Map([...required].map(([path, version]) => [path, replaced.get(path) ?? version]))
}

/** Modules both go.mod files build, at different versions. */
const mismatches = (a: string, b: string) => {
  const other = effective(b)
  return [...effective(a)]
    .filter(([path, version]) => other.has(path) && other.get(path) !== version)
    .map(([path, version]) => `${path}: ${version} vs ${other.get(path)}`)
}

describe("the local cluster's Go modules", () => {
  const controlPlane = read("cluster/go.mod")
  const node = read("cluster/node/go.mod")

  it.each([
    ["the real node's", "cluster/node/go.mod"],
    ["the kind node image's", "kind/node/go.mod"]
  ])("%s module builds what the control plane's does at the same versions", (_, path) => {
    const other = read(path)
    expect(mismatches(controlPlane, other)).toEqual([])
    expect(goModVersions(other).replaced.size).toBeGreaterThan(30)
  })

  it("finds a module built at another version, required or replaced", () => {
    const bumped = node.replace(/google\.golang\.org\/grpc v\S+/, "google.golang.org/grpc v1.0.0")
    expect(mismatches(controlPlane, bumped)).toEqual([
      `google.golang.org/grpc: ${goModVersions(controlPlane).required.get("google.golang.org/grpc")} vs v1.0.0`
    ])
    const replaced = node.replace("k8s.io/api => k8s.io/api v0.37.2", "k8s.io/api => k8s.io/api v0.36.0")
    expect(mismatches(controlPlane, replaced)).toEqual(["k8s.io/api: v0.37.2 vs v0.36.0"])
  })

  it("builds the versions versions.mjs names (the cache key), kwok as a tool of the module", () => {
    const { required } = goModVersions(controlPlane)
    expect(required.get("k8s.io/kubernetes")).toBe(VERSIONS.kubernetes)
    expect(goModVersions(node).required.get("k8s.io/kubernetes")).toBe(VERSIONS.kubernetes)
    expect(required.get("go.etcd.io/etcd/server/v3")).toBe(VERSIONS.etcd)
    expect(required.get("sigs.k8s.io/kwok")).toBe(VERSIONS.kwok)
    expect(controlPlane).toMatch(/^tool sigs\.k8s\.io\/kwok\/cmd\/kwok$/m)
  })
})
