// `nodemend-agent redact`: stdin to stdout through the bundle's redaction. Run as the operator runs it (the
// agent's main under Node's type stripping, spawned), and compared with the transform the collectors use.
import { spawnSync } from "node:child_process"
import { resolve } from "node:path"
import { PassThrough, Readable } from "node:stream"
import { text } from "node:stream/consumers"
import { describe, expect, it } from "vitest"
import { runRedact } from "../../src/cli/redact.ts"
import { REDACTED, redactionTransform } from "../../src/diagnostics/Redaction.ts"
import {
  BENIGN_LINES,
  K8S_ENV_JSON,
  K8S_ENV_YAML,
  PUTTY_KEY_FILE,
  SECRET,
  SECRET_SAMPLES
} from "./secret-corpus.ts"

const node = resolve(__dirname, "../../../../node_modules/.bin/node")
const main = resolve(__dirname, "../../src/main.ts")

const agent = (args: string[], input: string) =>
  spawnSync(node, ["--conditions=source", main, ...args], {
    input,
    encoding: "utf8",
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024
  })

/** What the collectors write for `input` (CollectorRunner: source -> redactionTransform() -> file). */
const asBundled = (input: string) => text(Readable.from([Buffer.from(input)]).pipe(redactionTransform()))

/**
 * Every corpus secret and benign line, a PuTTY key file, Kubernetes env on two lines a pair, and one line over the 256 KiB line cap with secrets
 * placed across the 64 KiB pieces a pipe delivers (the long-line path).
 */
const INPUT = [
  ...BENIGN_LINES,
  ...SECRET_SAMPLES.map((s) => s.text),
  ...PUTTY_KEY_FILE,
  ...K8S_ENV_YAML,
  ...K8S_ENV_JSON,
  `${"kubelet ok ".repeat(6_000)}password=abc;${SECRET.semicolonTail} ${"x ".repeat(40_000)}mysql -p${SECRET.mysqlAttached} ${"y".repeat(200_000)} token=${SECRET.genericToken}`,
  "last line without a newline"
].join("\n")

describe("nodemend-agent redact", () => {
  it("writes stdin to stdout as the bundle would hold it: every corpus secret hidden, the rest byte for byte", async () => {
    const result = agent(["redact"], INPUT)
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    expect(result.stdout).toBe(await asBundled(INPUT))
    const secrets = [
      ...SECRET_SAMPLES.flatMap((s) => s.secrets),
      SECRET.puttyPrivate,
      "k8s-yaml-planted",
      "k8s-json-planted",
      "3e4f",
      SECRET.semicolonTail,
      SECRET.mysqlAttached,
      SECRET.genericToken
    ]
    expect(secrets.filter((s) => result.stdout.includes(s))).toEqual([])
    const out = result.stdout.split("\n")
    expect(out.slice(0, BENIGN_LINES.length)).toEqual(BENIGN_LINES)
    expect(out.at(-1)).toBe("last line without a newline")
    expect(result.stdout).toContain(`password=${REDACTED} `)
  }, 60_000)

  it("answers --help on stdout, and an unknown flag with exit 64", () => {
    const help = agent(["redact", "--help"], "")
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/^usage: nodemend-agent redact/)
    const bad = agent(["redact", "--bogus"], "password=x\n")
    expect(bad.status).toBe(64)
    expect(bad.stdout).toBe("")
    expect(bad.stderr).toMatch(/Unknown option '--bogus'[\s\S]*usage: nodemend-agent redact/)
  }, 60_000)

  it("is listed in the agent's --help", () => {
    const result = agent(["--help"], "")
    expect(result.status).toBe(0)
    expect(result.stdout).toMatch(/nodemend-agent redact < input > output/)
  }, 60_000)

  it("in process: chunks cut anywhere give what the bundle's transform gives", async () => {
    const input = SECRET_SAMPLES.map((s) => s.text).join("\n")
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const collected = text(stdout)
    let err = ""
    const done = runRedact([], stdin, stdout, { write: (s: string) => (err += s) })
    for (let i = 0; i < input.length; i += 997) stdin.write(input.slice(i, i + 997))
    stdin.end()
    expect(await done).toBe(0)
    stdout.end()
    expect(await collected).toBe(await asBundled(input))
    expect(err).toBe("")
  })
})
