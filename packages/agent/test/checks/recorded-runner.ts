/** A CommandRunner that answers from recorded command output (real-commands.test.ts runs the real ones). */
import { Effect } from "effect"
import { CommandError, type CommandRunner } from "../../src/checks/command-runner.ts"

export type Recording =
  | { readonly stdout: string | Buffer; readonly exitCode?: number; readonly stderr?: string }
  | "missing"

export const recordedRunner = (
  answer: (command: string, args: readonly string[]) => Recording
): CommandRunner["Service"] & { calls: string[] } => {
  const calls: string[] = []
  const reply = (
    command: string,
    args: readonly string[]
  ): Effect.Effect<
    { readonly stdout: string | Buffer; readonly exitCode?: number; readonly stderr?: string },
    CommandError
  > => {
    calls.push([command, ...args].join(" "))
    const r = answer(command, args)
    return r === "missing"
      ? Effect.fail(new CommandError({ command, detail: "spawn ENOENT", exitCode: undefined }))
      : Effect.succeed(r)
  }
  return {
    calls,
    run: (command, args) =>
      reply(command, args).pipe(
        Effect.map((r) => ({
          stdout: r.stdout.toString(),
          exitCode: r.exitCode ?? 0,
          stderr: r.stderr ?? ""
        }))
      ),
    runBinary: (command, args) =>
      reply(command, args).pipe(
        Effect.map((r) => ({
          stdout: Buffer.isBuffer(r.stdout) ? r.stdout : Buffer.from(r.stdout),
          exitCode: r.exitCode ?? 0,
          stderr: r.stderr ?? ""
        }))
      )
  }
}
