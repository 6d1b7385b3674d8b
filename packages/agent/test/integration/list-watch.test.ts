/**
 * The agent's list-then-watch loop (@nodemend/kube-access listWatch) against the real API server: it lists, follows
 * changes from the list's resourceVersion across server-side ends of the watch. (410 Gone cannot be
 * provoked on demand on a fresh cluster: the watch cache answers an old resourceVersion without it; the
 * relist is tested in packages/kube-access/test/ListWatch.test.ts.)
 */
import { clients, kubeconfigPath, RUN_ID, waitFor } from "@nodemend/cluster-harness"
import { Effect, Fiber } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { kubeAccessFromKubeconfig } from "@nodemend/kube-access"
import { makeKubeHttp } from "../../src/k8s/kube-http.ts"
import { listWatch } from "@nodemend/kube-access"

const NAMESPACE = "default"
const PATH = `/api/v1/namespaces/${NAMESPACE}/configmaps`

describe("listWatch", () => {
  const { core } = clients()
  const http = makeKubeHttp(kubeAccessFromKubeconfig(kubeconfigPath()))
  const names: string[] = []
  afterAll(async () => {
    for (const name of names)
      await core.deleteNamespacedConfigMap({ name, namespace: NAMESPACE }).catch(() => undefined)
    http.close()
  })

  const follow = (name: string, resourceVersion?: string) => {
    const seen: Array<{ type: string; value: string | undefined }> = []
    const fiber = Effect.runFork(
      listWatch({
        http,
        path: PATH,
        query: { fieldSelector: `metadata.name=${name}` },
        ...(resourceVersion === undefined ? {} : { resourceVersion }),
        timeoutSeconds: 5,
        onObject: (type, object) => seen.push({ type, value: (object as { data?: { v?: string } }).data?.v })
      })
    )
    return { seen, stop: () => Effect.runPromise(Fiber.interrupt(fiber)) }
  }

  it("lists, then sees changes across server-side ends of the watch", async () => {
    const name = `list-watch-${RUN_ID}-a`
    names.push(name)
    await core.createNamespacedConfigMap({
      namespace: NAMESPACE,
      body: { metadata: { name }, data: { v: "1" } }
    })
    const w = follow(name)
    await waitFor("LISTED", async () => w.seen.find((e) => e.type === "LISTED" && e.value === "1"))
    // Past one 5 s watch request: the loop must resume and still see the change.
    await new Promise((r) => setTimeout(r, 6000))
    await core.replaceNamespacedConfigMap({
      name,
      namespace: NAMESPACE,
      body: { metadata: { name }, data: { v: "2" } }
    })
    await waitFor("MODIFIED", async () => w.seen.find((e) => e.type === "MODIFIED" && e.value === "2"))
    await core.deleteNamespacedConfigMap({ name, namespace: NAMESPACE })
    await waitFor("DELETED", async () => w.seen.find((e) => e.type === "DELETED"))
    await w.stop()
    expect(w.seen.filter((e) => e.type === "LISTED")).toHaveLength(1)
  }, 60_000)
})
