// `nodemend inject NODE dcgm-*` from a process of its own reaches the policy callback of the DCGM double that
// another process (the node's agent; here a stand-in using the agent's Dcgm service) loaded, decoded per the
// vendor struct. The condition on the API server is the scenario's step 1b.
import { waitFor } from "@nodemend/cluster-harness/waitFor"
import { spawn, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { buildGpuDoubles } from "../../dcgm-native/test/double/build.ts"
import { dcgmFifoOf } from "../src/faults.mjs"
import { makeHost } from "../src/host.mjs"

const HERE = dirname(fileURLToPath(import.meta.url))
const CLI = join(HERE, "../src/cli.mjs")
const dir = mkdtempSync(join(tmpdir(), "nodemend-demo-inject-"))
const gpuHost = makeHost(join(dir, "hosts", "ip-10-1-2-3.gpu"), "5d0c8f3e-1b2a-4c3d-9e8f-7a6b5c4d3e2f")
const plainHost = makeHost(join(dir, "hosts", "ip-10-1-9-9.general"), "6e1d9f4a-2c3b-4d4e-8f9a-8b7c6d5e4f3a")
mkdirSync(dirname(dcgmFifoOf(gpuHost)), { recursive: true })
writeFileSync(
  join(dir, "fleet.json"),
  JSON.stringify({ hosts: { "ip-10-1-2-3.gpu": gpuHost, "ip-10-1-9-9.general": plainHost } })
)
let client
afterAll(() => {
  if (client?.exitCode === null) client.kill("SIGKILL")
  rmSync(dir, { recursive: true, force: true })
})

const inject = (node, fault) =>
  spawnSync(process.execPath, ["--conditions=source", CLI, "inject", node, fault], {
    env: { ...process.env, NODEMEND_DEMO_DIR: dir },
    encoding: "utf8"
  })

describe("nodemend inject: DCGM policy violations", () => {
  it("reach the policy callback in the node's agent process, decoded", { timeout: 120_000 }, async () => {
    const doubles = buildGpuDoubles()
    client = spawn(
      process.execPath,
      ["--conditions=source", join(HERE, "support/dcgm-client.mjs"), doubles.dcgm],
      {
        env: { ...process.env, NMDOUBLE_DCGM_GPUS: "8", NMDOUBLE_DCGM_POLICY_FIFO: dcgmFifoOf(gpuHost) },
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    const lines = []
    let err = ""
    client.stdout.on("data", (d) => lines.push(...String(d).split("\n").filter(Boolean)))
    client.stderr.on("data", (d) => (err += d))
    // Bounds, not timings: a client that loads the agent's DCGM code from source took over 10 s to register on a
    // machine at load 19 (a fresh Debian chroot running the unit phase beside four engineers' cluster tests).
    const until = (what, ok) =>
      waitFor(what, () => ok(), { timeoutMs: 60_000, intervalMs: 50 }).catch((e) => {
        throw new Error(`${e.message}; client stderr: ${err}`)
      })
    await until("the client registered", () => lines.includes("ready"))

    const r = inject("2-3", "dcgm-dbe")
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(r.stdout).toContain("AcceleratedHardwareReady=False NvidiaDoubleBitError")
    await until("the DBE violation", () => lines.some((l) => l.includes("DoubleBitEcc")))
    expect(JSON.parse(lines.find((l) => l.includes("DoubleBitEcc")))).toMatchObject({
      _tag: "DoubleBitEcc",
      gpuId: 0,
      location: "Device",
      errors: 1
    })

    expect(inject("2-3", "dcgm-xid48").status).toBe(0)
    await until("the XID violation", () => lines.some((l) => l.includes('"Xid"')))
    expect(JSON.parse(lines.find((l) => l.includes('"Xid"')))).toMatchObject({
      _tag: "Xid",
      gpuId: 6,
      xid: 48
    })
  })

  it("a node without the DCGM double, or whose agent is gone, is refused with the reason", async () => {
    const r = inject("9-9", "dcgm-dbe")
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/dcgm-dbe not written: .*no DCGM test double was started for this host/)
    const exited = new Promise((resolve) => client.once("exit", resolve))
    client.kill("SIGKILL")
    await exited
    const r2 = inject("2-3", "dcgm-dbe")
    expect(r2.status).toBe(2)
    expect(r2.stderr).toMatch(/no DCGM test double is reading .* \(is the node's agent running\?\)/)
  })
})
