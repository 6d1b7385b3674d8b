/**
 * `nodemend-agent redact < in > out`
 *
 * Writes stdin to stdout through the redaction a log bundle goes through (`redactionTransform` with the
 * collectors' settings: the same rules, the same line cap, the same chunked streaming path), so an operator
 * can see what a bundle would hold before sending it anywhere: `journalctl -u kubelet | nodemend-agent redact`.
 * No byte cap: the collectors' per-file cap truncates, which is not redaction.
 * Exit codes: 0 done, 1 a read or write failed, 64 usage error.
 */
import type { Readable, Writable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { parseArgs } from "node:util"
import { redactionTransform } from "../diagnostics/Redaction.ts"

export const REDACT_USAGE = `usage: nodemend-agent redact < input > output
  Writes the input with every secret the log bundle redaction knows replaced by [REDACTED]
  (the same code and streaming path the diagnostics collector uses; docs/diagnostics.md).`

interface TextSink {
  write(chunk: string): unknown
}

export const runRedact = async (
  args: readonly string[],
  stdin: Readable,
  stdout: Writable,
  stderr: TextSink
): Promise<number> => {
  let help: boolean | undefined
  try {
    help = parseArgs({
      args: [...args],
      options: { help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: false
    }).values.help
  } catch (e) {
    stderr.write(`nodemend-agent redact: ${(e as Error).message}\n${REDACT_USAGE}\n`)
    return 64
  }
  if (help === true) {
    stdout.write(`${REDACT_USAGE}\n`)
    return 0
  }
  try {
    // stdout stays open (end: false): process.stdout is not ours to close, and a test's sink may be reused.
    await pipeline(stdin, redactionTransform(), stdout, { end: false })
    return 0
  } catch (e) {
    // A closed pipe downstream (`| head`) is the reader's choice, not a failure.
    if ((e as NodeJS.ErrnoException).code === "EPIPE") return 0
    stderr.write(`nodemend-agent redact: ${(e as Error).message}\n`)
    return 1
  }
}
