/**
 * node:http without loading undici. An ESM `import ... from "node:http"` builds the module namespace by
 * reading every export, and Node 24's http module exports lazy WebSocket/CloseEvent/MessageEvent getters
 * that load Node's bundled undici: ~3 MiB of resident memory on every node for nothing the agent uses.
 * process.getBuiltinModule returns the CommonJS exports without touching those getters.
 */
export const nodeHttp = process.getBuiltinModule("node:http")

/**
 * GET `url` (plain http, e.g. a loopback introspection endpoint) and return its body when the status is
 * 2xx, undefined otherwise. Not fetch(): Node's fetch is undici, whose HTTP parser is WebAssembly (absent
 * under the agent's `--lite-mode`) and whose code costs ~3 MiB once loaded.
 */
export const getText = (url: string, timeoutMs: number, signal?: AbortSignal): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const req = nodeHttp.get(
      url,
      { timeout: timeoutMs, ...(signal === undefined ? {} : { signal }) },
      (res) => {
        const ok = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300
        const chunks: Buffer[] = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve(ok ? Buffer.concat(chunks).toString("utf8") : undefined))
        res.on("error", reject)
      }
    )
    req.on("timeout", () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)))
    req.on("error", reject)
  })
