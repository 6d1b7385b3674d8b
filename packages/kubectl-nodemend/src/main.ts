#!/usr/bin/env -S node --conditions=source
// kubectl plugin entry point: kubectl runs `kubectl-nodemend <args>` for `kubectl nodemend <args>`.
import { run } from "./cli.ts"

const code = await run(process.argv.slice(2), {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`)
})
process.exitCode = code
