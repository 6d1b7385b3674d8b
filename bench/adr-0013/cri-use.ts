// Loads one CRI client variant and asks a real containerd for 6 sandboxes + 14 unknown ids, 5 times; prints RSS and the answers.
import { Effect } from "effect"
import { criRuntimeClient } from "VARIANT"
const ids: string[] = JSON.parse(process.env.IDS!)
for (let i = 0; i < 14; i++) ids.push(`${"0".repeat(62)}${String(i).padStart(2, "0")}`)
let answers: ReadonlyMap<string, { readonly createdAt: bigint } | undefined> | undefined
for (let n = 0; n < 5; n++)
  answers = await Effect.runPromise(criRuntimeClient(process.env.CRI_SOCKET!).podSandboxStatuses(ids))
const out = [...answers!].map(([k, v]) => [
  k,
  v === undefined ? null : { ...v, createdAt: String(v.createdAt) }
])
console.log(
  JSON.stringify({
    rssMiB: +(process.memoryUsage().rss / 2 ** 20).toFixed(1),
    maxRssMiB: +(process.resourceUsage().maxRSS / 1024).toFixed(1),
    answers: out
  })
)
