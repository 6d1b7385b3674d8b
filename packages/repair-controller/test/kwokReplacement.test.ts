// The kwok cloud's replacement is created in a fiber detached from the repair, which does not ask again while the
// controller that launched it lives: an API server restart (seconds of refused requests) must delay it, not lose it.
// CI once lost one this way (five immediate retries, all during the restart).
import { describe, expect, it } from "@effect/vitest"
import { KubeError, type Node } from "@nodemend/kube-access"
import { Clock, Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeKwokCloudProvider } from "../src/cloud/kwok/KwokCloudProvider.ts"
import type { KubeShape } from "../src/kube/Kube.ts"

const refused = new KubeError({
  operation: "createNode",
  code: undefined,
  reason: undefined,
  message: "connect ECONNREFUSED"
})

/** An API server that refuses `outageMs` of requests, then creates Nodes. */
const apiServer = (outageMs: number) => {
  const created: Node[] = []
  let tries = 0
  const kube = {
    createNode: (body: Node) =>
      Effect.gen(function* () {
        tries++
        if ((yield* Clock.currentTimeMillis) < outageMs) return yield* Effect.fail(refused)
        created.push(body)
        return body
      }),
    patchNodeStatus: () => Effect.succeed({}),
    readConfigMap: () => Effect.fail(refused)
  } as unknown as KubeShape
  return { kube, created, tries: () => tries }
}

const node = { name: "n1", uid: "u1", providerID: "kwok://n1", labels: { pool: "p" } }
const facts = { instanceId: "kwok://n1", launch: {}, owner: { kind: "standalone" } } as never

describe("kwok replacement across an API server restart (TestClock)", () => {
  it.effect("refused for 6 s after its 1 s delay: created once the API server answers", () =>
    Effect.gen(function* () {
      const server = apiServer(7_000)
      const cloud = yield* makeKwokCloudProvider(server.kube, {
        namespace: "ns",
        zonalShiftConfigMap: "shifts",
        replacementDelayMs: 1_000,
        poolLabel: "pool"
      })
      const rep = yield* cloud.launchReplacement(node as never, {
        facts,
        avoidZones: [],
        idempotencyToken: "repair-1"
      })
      for (let s = 0; s < 20; s++) yield* TestClock.adjust("1 second")
      expect(server.created.map((n) => n.metadata?.name)).toEqual([rep.nodeName])
      expect(server.tries()).toBeGreaterThan(5)
    })
  )

  it.effect("an outage longer than the retries (about two minutes) gives up without creating anything", () =>
    Effect.gen(function* () {
      const server = apiServer(10 * 60_000)
      const cloud = yield* makeKwokCloudProvider(server.kube, {
        namespace: "ns",
        zonalShiftConfigMap: "shifts",
        replacementDelayMs: 0,
        poolLabel: "pool"
      })
      yield* cloud.launchReplacement(node as never, { facts, avoidZones: [], idempotencyToken: "repair-2" })
      for (let s = 0; s < 300; s++) yield* TestClock.adjust("1 second")
      expect(server.created).toEqual([])
      expect(server.tries()).toBe(31)
    })
  )
})
