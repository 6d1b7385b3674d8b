// The what-if replay's API server in memory (whatif/memoryApiServer.ts) takes request bodies as a real API server
// does, as JSON: the controller's bodies reach the live one serialized, so the replay must read back what JSON
// gives, not the JavaScript values the controller built.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { kubeOver } from "../src/kube/Kube.ts"
import { makeMemoryApiServer } from "../src/whatif/memoryApiServer.ts"

const T = Date.parse("2026-12-07T00:00:00Z")
const setup = () => {
  const api = makeMemoryApiServer(() => T)
  return { api, kube: kubeOver(api.http, api.http, "what-if test") }
}
const call = (
  api: ReturnType<typeof makeMemoryApiServer>,
  method: "GET" | "POST" | "PATCH",
  path: string,
  body?: unknown,
  ct?: string
) => api.http.call("test", method, path, body, ct)

describe("whatif memory API server: request bodies as JSON", () => {
  it.effect(
    "a merge patch's undefined key is not sent: upsertConfigMap without labels keeps the labels",
    () =>
      Effect.gen(function* () {
        const { api, kube } = setup()
        yield* kube.upsertConfigMap({
          metadata: { name: "j", namespace: "ns", labels: { journal: "true" } },
          data: { record: "1" }
        })
        // Kube.ts sends `{ metadata: { labels: undefined }, data }` for a body without labels.
        yield* kube.upsertConfigMap({ metadata: { name: "j", namespace: "ns" }, data: { record: "2" } }, true)
        const stored = api.peek("v1/configmaps", "ns", "j")
        expect(stored?.metadata?.labels).toEqual({ journal: "true" })
        expect(stored?.data).toEqual({ record: "2" })
        const listed = yield* kube.listConfigMaps("ns", "journal=true")
        expect(listed.map((c) => c.metadata?.name)).toEqual(["j"])
      })
  )

  it.effect("stores what JSON gives: a Date is its ISO string, NaN null, an undefined key absent", () =>
    Effect.gen(function* () {
      const { api } = setup()
      const at = new Date(T - 60_000)
      yield* call(api, "POST", "/api/v1/namespaces/ns/configmaps", {
        metadata: { name: "c", annotations: { at } },
        data: { gone: undefined, n: Number.NaN }
      })
      const read = (yield* call(api, "GET", "/api/v1/namespaces/ns/configmaps/c")) as {
        metadata: { annotations: Record<string, unknown> }
        data: Record<string, unknown>
      }
      expect(read.metadata.annotations.at).toBe(at.toISOString())
      expect(read.data).toEqual({ n: null })
      expect("gone" in read.data).toBe(false)
    })
  )

  it.effect("a patched cluster-scoped object has no namespace key (the stored one has none)", () =>
    Effect.gen(function* () {
      const { api } = setup()
      yield* call(api, "POST", "/api/v1/nodes", { metadata: { name: "n1" } })
      yield* call(
        api,
        "PATCH",
        "/api/v1/nodes/n1",
        { metadata: { labels: { pool: "gpu" } } },
        "application/merge-patch+json"
      )
      const meta = api.peek("v1/nodes", undefined, "n1")?.metadata ?? {}
      expect(meta.labels).toEqual({ pool: "gpu" })
      expect(Object.keys(meta)).not.toContain("namespace")
    })
  )
})
