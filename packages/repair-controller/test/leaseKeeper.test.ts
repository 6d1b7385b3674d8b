// The Lease keeper's thread (controller/LeaseKeeper.ts) against a process whose own thread is busy: renewals go on
// while it is busy for less than a renew deadline, and leadership ends once it has not run for one. Real threads,
// so real time: the probe (test/leaseKeeperProbe.ts) runs in its own Node 24 process; the margins are wide.
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"

const PKG = join(import.meta.dirname, "..")
const NODE = join(PKG, "..", "..", "node_modules", ".bin", "node")

const probe = (busyMs: number, mode: "thread" | "inline") => {
  const r = spawnSync(NODE, ["--conditions=source", "test/leaseKeeperProbe.ts", String(busyMs), mode], {
    cwd: PKG,
    encoding: "utf8",
    timeout: 60_000
  })
  const line = r.stdout.trim().split("\n").at(-1) ?? ""
  if (r.status !== 0 || !line.startsWith("{"))
    throw new Error(`probe failed (${r.status}): ${r.stderr}${r.stdout}`)
  return JSON.parse(line) as { before: number; during: number; end?: { _tag: string; stalledMs?: number } }
}

describe("the Lease keeper's thread", () => {
  it("renews while the controller's thread is busy for 2 s (renewals every 0.2 s), and keeps leading", () => {
    const r = probe(2000, "thread")
    expect(r.during).toBeGreaterThanOrEqual(3)
    expect(r.end).toBeUndefined()
  }, 60_000)

  it("on the controller's own thread, the same renewals all wait behind its work", () => {
    expect(probe(2000, "inline").during).toBe(0)
  }, 60_000)

  it("ends leadership once the controller's thread has not run for a renew deadline (4 s of a 5 s lease)", () => {
    const r = probe(6500, "thread")
    expect(r.end?._tag).toBe("ControllerStalled")
    expect(r.end?.stalledMs).toBeGreaterThanOrEqual(4000)
  }, 60_000)
})
