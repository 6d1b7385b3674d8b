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
    expect(r._tag).toBe("Failure")
  })
  it("returns binary output intact", async () => {
    const r = await run((c) => c.runBinary("printf", ["\\001\\377"]))
    expect(r._tag === "Success" && [...r.success.stdout]).toEqual([1, 255])
  })
})
