/**
 * Runs host commands with a bounded timeout (NMA issue #219: a collector without one blocked forever).
 * With a host root other than `/`, commands run as `chroot <root> <cmd>` so they see the host's binaries
 * and config; the agent container needs no copies of them.
 */
import { Context, Data, Effect, Layer } from "effect"
import { execFile } from "node:child_process"

export class CommandError extends Data.TaggedError("CommandError")<{
  readonly command: string
  readonly detail: string
  readonly exitCode: number | undefined
}> {
  override get message(): string {
    return `${this.command}: ${this.detail}`
  }
}

export interface CommandResult {
  readonly stdout: string
  readonly exitCode: number
  /** Kept so a failing command's warning can say why (`System has not been booted with systemd ...`). */
  readonly stderr: string
}

export interface BinaryCommandResult {
  readonly stdout: Buffer
  readonly exitCode: number
  readonly stderr: string
}

/** A command that ran but did not succeed, in words for a warning: exit code and stderr (trimmed, bounded). */
export const exitDetail = (r: { readonly exitCode: number; readonly stderr: string }): string => {
  const err = r.stderr.trim().replace(/\s*\n\s*/g, "; ")
  return err === "" ? `exit ${r.exitCode}` : `exit ${r.exitCode}: ${err.slice(0, 500)}`
}

export class CommandRunner extends Context.Service<
  CommandRunner,
  {
    /** Resolves for any exit code (callers decide what a non-zero code means); fails on timeout or spawn error. */
    readonly run: (
      command: string,
      args: readonly string[],
      options?: { readonly timeoutMs?: number }
    ) => Effect.Effect<CommandResult, CommandError>
    /** The same, for commands that print binary data (NVMe log pages). */
    readonly runBinary: (
      command: string,
      args: readonly string[],
      options?: { readonly timeoutMs?: number }
    ) => Effect.Effect<BinaryCommandResult, CommandError>
  }
>()("@nodemend/agent/CommandRunner") {}

export const DEFAULT_COMMAND_TIMEOUT_MS = 10_000
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024

const exec = <Out extends string | Buffer>(
  hostRoot: string,
  command: string,
  args: readonly string[],
  timeoutMs: number | undefined,
  encoding: "utf8" | "buffer"
): Effect.Effect<
  { readonly stdout: Out; readonly exitCode: number; readonly stderr: string },
  CommandError
> =>
  Effect.callback((resume) => {
    const [file, argv] = hostRoot === "/" ? [command, [...args]] : ["chroot", [hostRoot, command, ...args]]
    const label = [command, ...args].join(" ")
    const child = execFile(
      file,
      argv,
      {
        timeout: timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
        killSignal: "SIGKILL",
        maxBuffer: MAX_OUTPUT_BYTES,
        encoding
      },
      (error, stdout, stderr) => {
        const out = stdout as unknown as Out
        const err = stderr.toString()
        if (error === null) return resume(Effect.succeed({ stdout: out, exitCode: 0, stderr: err }))
        const e = error as NodeJS.ErrnoException & { killed?: boolean; code?: number | string }
        if (e.killed === true)
          return resume(
            Effect.fail(new CommandError({ command: label, detail: "timed out", exitCode: undefined }))
          )
        if (typeof e.code === "number")
          return resume(Effect.succeed({ stdout: out, exitCode: e.code, stderr: err }))
        resume(Effect.fail(new CommandError({ command: label, detail: e.message, exitCode: undefined })))
      }
    )
    return Effect.sync(() => {
      child.kill("SIGKILL")
    })
  })

export const commandRunnerLayer = (hostRoot: string): Layer.Layer<CommandRunner> =>
  Layer.succeed(
    CommandRunner,
    CommandRunner.of({
      run: (command, args, options) => exec<string>(hostRoot, command, args, options?.timeoutMs, "utf8"),
      runBinary: (command, args, options) =>
        exec<Buffer>(hostRoot, command, args, options?.timeoutMs, "buffer")
    })
  )
