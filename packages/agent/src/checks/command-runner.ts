/**
 * Runs host commands with a bounded timeout (NMA issue #219: a collector without one blocked forever).
 * With a host root other than `/`, commands run as `chroot <root> <cmd>` so they see the host's binaries
 * and config; the agent container needs no copies of them. Each command runs in its own process group,
 * and a timeout kills the whole group: killing only the command left whatever it had forked running
 * (a hung helper per run, found with a real forking command in command-runner.test.ts).
 */
import { Context, Data, Effect, Layer } from "effect"
import { spawn } from "node:child_process"

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

const MAX_STDERR_BYTES = 64 * 1024

const exec = <Out extends string | Buffer>(
  hostRoot: string,
  command: string,
  args: readonly string[],
  timeoutMs: number | undefined,
  encoding: "utf8" | "buffer"
): Effect.Effect<
  { readonly stdout: Out; readonly exitCode: number; readonly stderr: string },
  CommandError
> => {
  const label = [command, ...args].join(" ")
  const failure = (detail: string) => new CommandError({ command: label, detail, exitCode: undefined })
  return Effect.callback<
    { readonly stdout: Out; readonly exitCode: number; readonly stderr: string },
    CommandError
  >((resume) => {
    const [file, argv] = hostRoot === "/" ? [command, [...args]] : ["chroot", [hostRoot, command, ...args]]
    // detached: a process group of its own, so that killGroup reaches what the command forked
    const child = spawn(file, argv, { detached: true, stdio: ["ignore", "pipe", "pipe"] })
    const stdout: Buffer[] = []
    const stderr: Buffer[] = []
    let stdoutBytes = 0
    let stderrBytes = 0
    let done = false
    const finish = (result: Parameters<typeof resume>[0]) => {
      if (done) return
      done = true
      resume(result)
    }
    child.stdout.on("data", (chunk: Buffer) => {
      stdoutBytes += chunk.length
      if (stdoutBytes > MAX_OUTPUT_BYTES) {
        killGroup(child.pid)
        return finish(Effect.fail(failure(`printed more than ${MAX_OUTPUT_BYTES} bytes`)))
      }
      stdout.push(chunk)
    })
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderrBytes < MAX_STDERR_BYTES) stderr.push(chunk)
      stderrBytes += chunk.length
    })
    child.on("error", (e) => finish(Effect.fail(failure(e.message))))
    child.on("close", (code, signal) => {
      if (code === null) return finish(Effect.fail(failure(`killed by ${signal ?? "a signal"}`)))
      const out = Buffer.concat(stdout)
      finish(
        Effect.succeed({
          stdout: (encoding === "utf8" ? out.toString("utf8") : out) as Out,
          exitCode: code,
          stderr: Buffer.concat(stderr).toString("utf8")
        })
      )
    })
    return Effect.sync(() => {
      done = true
      killGroup(child.pid)
    })
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      // the callback's finalizer has killed the group by the time this runs
      orElse: () => Effect.fail(failure("timed out"))
    })
  )
}

const killGroup = (pid: number | undefined): void => {
  if (pid === undefined) return
  try {
    process.kill(-pid, "SIGKILL")
  } catch {
    // already gone
  }
}

export const commandRunnerLayer = (hostRoot: string): Layer.Layer<CommandRunner> =>
  Layer.succeed(
    CommandRunner,
    CommandRunner.of({
      run: (command, args, options) => exec<string>(hostRoot, command, args, options?.timeoutMs, "utf8"),
      runBinary: (command, args, options) =>
        exec<Buffer>(hostRoot, command, args, options?.timeoutMs, "buffer")
    })
  )
