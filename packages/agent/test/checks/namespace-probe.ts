/**
 * Runs one production check, built by the production registry with the production CommandRunner, inside
 * whatever namespaces this process was started in (real-commands.test.ts starts it under `unshare`). It
 * reads one JSON request per stdin line and answers one JSON line on stdout:
 *   {"op":"ping"}                                                    -> {"ok":true}
 *   {"op":"build","check":"iptables","config":{...},"filesRoot":"/"} -> {"ok":true}
 *   {"op":"tick","nowMs":0}                                          -> {"findings":[...],"logs":[...]}
 *   {"op":"serve","port":61679,"path":"/v1/enis","body":"..."}       -> {"ok":true}
 * Logs are what the check logged during the tick (Effect's logger), so tests can assert clear errors.
 */
import { Effect, Logger, Result } from "effect"
import { createServer } from "node:http"
import { createInterface } from "node:readline"
import { CommandRunner, commandRunnerLayer } from "../../src/checks/command-runner.ts"
import { hostFiles } from "../../src/checks/host-files.ts"
import { buildChecks } from "../../src/checks/registry.ts"
import { decodeConfig } from "../../src/config/load.ts"
import type { PeriodicCheck } from "../../src/scheduler/periodic-check.ts"

let check: PeriodicCheck | undefined
let files = hostFiles("/")
const logs: { level: string; message: unknown }[] = []
const capture = Logger.make(({ logLevel, message }) => {
  logs.push({ level: logLevel, message })
})

const handle = async (req: Record<string, unknown>): Promise<unknown> => {
  switch (req.op) {
    case "ping":
      return { ok: true }
    case "build": {
      const config = decodeConfig(req.config ?? {})
      if (Result.isFailure(config)) throw new Error(config.failure.message)
      files = hostFiles(typeof req.filesRoot === "string" ? req.filesRoot : "/")
      const runner = await Effect.runPromise(
        Effect.service(CommandRunner).pipe(Effect.provide(commandRunnerLayer("/")))
      )
      check = buildChecks(config.success, files, runner).find((c) => c.name === req.check)
      if (check === undefined) throw new Error(`no check named ${String(req.check)}`)
      return { ok: true }
    }
    case "tick": {
      if (check === undefined) throw new Error("build a check first")
      logs.length = 0
      const findings = await Effect.runPromise(
        check
          .run({ nowMs: Number(req.nowMs), pids: files.pids })
          .pipe(Effect.provide(Logger.layer([capture])))
      )
      return { findings, logs: [...logs] }
    }
    case "serve": {
      const body = String(req.body)
      const server = createServer((r, res) => {
        res.writeHead(r.url === req.path ? 200 : 404, { "content-type": "application/json" })
        res.end(r.url === req.path ? body : "")
      })
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject)
        server.listen(Number(req.port), "127.0.0.1", resolve)
      })
      server.unref()
      return { ok: true }
    }
    default:
      throw new Error(`unknown op ${String(req.op)}`)
  }
}

// One request at a time, in order: the test awaits each answer before sending the next.
let queue = Promise.resolve()
createInterface({ input: process.stdin }).on("line", (line) => {
  queue = queue.then(async () => {
    const answer = await handle(JSON.parse(line) as Record<string, unknown>).catch((e: unknown) => ({
      error: String(e)
    }))
    process.stdout.write(`${JSON.stringify(answer)}\n`)
  })
})
process.stdin.on("end", () => process.exit(0))
