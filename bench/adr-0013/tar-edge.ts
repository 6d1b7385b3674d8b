// Edge cases of both tar.gz writers, listed by GNU tar.
import { createWriteStream, openSync, ftruncateSync, writeSync, closeSync } from "node:fs"
import { spawnSync } from "node:child_process"
import { TarGzWriter as Hand, tarHeader } from "../../packages/agent/src/diagnostics/TarGzWriter.ts"
import { TarGzWriter as Lib } from "./variants/tar-gz-writer-tarstream.ts"
import tarStream from "tar-stream"
const TMP = process.env.ADR_TMP ?? "/tmp/adr27"

const names: [string, string][] = [
  ["100-byte name", "n".repeat(96) + ".log"],
  ["101-byte name, no slash", "n".repeat(97) + ".log"],
  ["200-byte path (prefix split)", `${"d".repeat(120)}/${"f".repeat(75)}.log`],
  ["300-byte path", `${"d".repeat(150)}/${"e".repeat(80)}/${"f".repeat(60)}.log`],
  ["non-ASCII", "journal/ünïcödé-日本語.log"],
  ["non-ASCII, 120 bytes in 60 chars", "é".repeat(60)],
  ["name with spaces and ~", "var log/a b~c.txt"]
]
for (const [label, Writer] of [
  ["hand-written", Hand],
  ["tar-stream", Lib]
] as const) {
  console.log(`== ${label}`)
  for (const [what, name] of names) {
    const file = `${TMP}/edge-${label}.tar.gz`
    const w = new Writer(createWriteStream(file))
    let err = ""
    try {
      await w.addBuffer(name, "x\n", Date.UTC(2026, 0, 1))
    } catch (e) {
      err = (e as Error).message.slice(0, 80)
    }
    await w.finish()
    const r = spawnSync("tar", ["-tzvf", file], { encoding: "utf8" })
    const listed = r.stdout
      .trim()
      .split("\n")
      .map((l) => l.replace(/^.*2026-01-01 \d\d:\d\d /, ""))
    const ok = listed.length === 1 && listed[0] === name
    console.log(
      `${what}: ${err ? `refused (${err})` : ok ? "GNU tar lists it exactly" : `GNU tar lists ${JSON.stringify(r.stdout + r.stderr).slice(0, 160)}`}`
    )
  }
}
// > 8 GiB: the header alone, in a sparse uncompressed tar that GNU tar can seek through
const big = 8 * 2 ** 30 + 1
const sparseTar = (header: Buffer, path: string) => {
  const fd = openSync(path, "w")
  writeSync(fd, header, 0, 512, 0)
  ftruncateSync(fd, 512 + Math.ceil(big / 512) * 512 + 1024)
  closeSync(fd)
  const r = spawnSync("tar", ["-tvf", path], { encoding: "utf8" })
  return `${r.status} ${(r.stdout + r.stderr).trim().replace(/\s+/g, " ").slice(0, 160)}`
}
console.log("== 8 GiB + 1 byte")
const h = tarHeader({ path: "big.bin", size: big, mtimeMs: Date.UTC(2026, 0, 1) })
console.log(
  `hand-written size field ${JSON.stringify(h.subarray(124, 136).toString("latin1"))}: tar -tvf: ${sparseTar(h, `${TMP}/big-hand.tar`)}`
)
const pack = tarStream.pack()
const first: Buffer = await new Promise((resolve) => {
  pack.once("data", (b: Buffer) => resolve(b))
  pack.entry({ name: "big.bin", size: big, mtime: new Date(Date.UTC(2026, 0, 1)) })
})
console.log(
  `tar-stream size field ${JSON.stringify(first.subarray(124, 136).toString("latin1"))} (${first.length} bytes first): tar -tvf: ${sparseTar(first.subarray(0, 512), `${TMP}/big-lib.tar`)}`
)
