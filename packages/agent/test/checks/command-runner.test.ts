import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { CommandRunner, commandRunnerLayer } from "../../src/checks/command-runner.ts"

const run = <A, E>(f: (r: CommandRunner["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.flatMap(Effect.service(CommandRunner), f).pipe(
      Effect.provide(commandRunnerLayer("/")),
      Effect.result
    )
  )

describe("command runner", () => {
  it("returns stdout and any exit code", async () => {
    const r = await run((c) => c.run("sh", ["-c", "echo hi; exit 3"]))
    expect(r).toMatchObject({ _tag: "Success", success: { stdout: "hi\n", exitCode: 3 } })
  })
  it("kills a command that runs past its timeout", async () => {
    const started = Date.now()
    const r = await run((c) => c.run("sh", ["-c", "sleep 5"], { timeoutMs: 200 }))
    expect(r._tag).toBe("Failure")
    expect(Date.now() - started).toBeLessThan(3000)
  })
  it("fails when the command does not exist", async () => {
    const r = await run((c) => c.run("no-such-command-nodemend", []))
    expect(r).toMatchObject({ _tag: "Failure", failure: { message: expect.stringContaining("ENOENT") } })
  })
  it("a timeout also kills what the command forked (its whole process group)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "nodemend-runner-"))
    try {
      const pidFile = join(dir, "pid")
      // the shell forks sleep and waits: killing only the shell would leave sleep running for 30 s
      const r = await run((c) =>
        c.run("sh", ["-c", `sleep 30 & echo $! > ${pidFile}; wait`], { timeoutMs: 300 })
      )
      expect(r).toMatchObject({ _tag: "Failure", failure: { message: expect.stringContaining("timed out") } })
      const pid = Number(readFileSync(pidFile, "utf8"))
      // gone, or a zombie waiting for init to reap it: either way no longer running
      const running = () => {
        try {
          return !/^\d+ \([^)]*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
        } catch {
          return false
        }
      }
      for (let i = 0; i < 20 && running(); i++) await new Promise((ok) => setTimeout(ok, 50))
      expect(running()).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
  it("returns stderr with any exit code", async () => {
    const r = await run((c) => c.run("sh", ["-c", "echo why >&2; exit 4"]))
    expect(r).toMatchObject({ _tag: "Success", success: { stdout: "", exitCode: 4, stderr: "why\n" } })
  })
  it("returns binary output intact", async () => {
    const r = await run((c) => c.runBinary("printf", ["\\001\\377"]))
    expect(r._tag === "Success" && [...r.success.stdout]).toEqual([1, 255])
  })
})
