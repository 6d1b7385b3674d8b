// One log bundle's worth of work with one writer variant: 200 buffers of 64 KiB text + one 64 MiB file; prints RSS and time.
import { createWriteStream, statSync } from "node:fs"
import { TarGzWriter } from "VARIANT"
const TMP = process.env.ADR_TMP ?? "/tmp/adr27"
const line =
  "Dec 02 02:30:00 node kubelet[123]: I1202 02:30:00.000000 123 reconciler.go:100] something happened\n"
const text = line.repeat(Math.ceil(65536 / line.length)).slice(0, 65536)
const t0 = performance.now()
const out = `${TMP}/use-${process.argv[2]}.tar.gz`
const w = new TarGzWriter(createWriteStream(out))
await w.addDirectory("node-1/logs")
for (let i = 0; i < 200; i++) await w.addBuffer(`node-1/logs/file-${i}.log`, `${i}\n${text}`, 1764640000000)
await w.addFile("node-1/big.bin", `${TMP}/big-input.bin`)
await w.finish()
console.log(
  JSON.stringify({
    ms: Math.round(performance.now() - t0),
    bytes: statSync(out).size,
    rssMiB: +(process.memoryUsage().rss / 2 ** 20).toFixed(1),
    maxRssMiB: +(process.resourceUsage().maxRSS / 1024).toFixed(1)
  })
)
