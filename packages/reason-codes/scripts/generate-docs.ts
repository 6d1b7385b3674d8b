import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { renderReasonCodesDoc } from "./render-docs.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const { version } = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { version: string }
writeFileSync(`${root}../../docs/reason-codes.md`, renderReasonCodesDoc(version))
console.log("docs/reason-codes.md written")
