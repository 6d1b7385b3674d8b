// No agent runs on the cluster tests' kwok Nodes that Karpenter launches: this writes for each Node a selector
// picks what a healthy agent first reports (every managed type True), shortly after it is Ready, as the kwok
// provider does for its own replacements; the replacement health gate reads it. A type already reported (a test's
// fault, written as its agent would) is left as it is.
import { type CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node"
import { CONDITION_TYPE_INFO } from "@nodemend/reason-codes"
import { isReady, sleep } from "./helpers.ts"

const AFTER_READY_MS = 1500

export interface AgentReports {
  readonly stop: () => Promise<void>
}

export const reportAsAgents = (core: CoreV1Api, labelSelector: string): AgentReports => {
  const readySince = new Map<string, number>()
  const reported = new Set<string>()
  let on = true
  const report = async (name: string, present: ReadonlyArray<string>) => {
    const at = new Date()
    const conditions = CONDITION_TYPE_INFO.filter((c) => !present.includes(c.type)).map((c) => ({
      type: c.type,
      status: "True",
      reason: c.readyReason,
      message: c.readyMessage,
      lastHeartbeatTime: at,
      lastTransitionTime: at
    }))
    if (conditions.length > 0)
      await core.patchNodeStatus(
        { name, body: { status: { conditions } } },
        setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch)
      )
  }
  const loop = (async () => {
    while (on) {
      const nodes = await core.listNode({ labelSelector }).catch(() => ({ items: [] }))
      for (const n of nodes.items) {
        const name = n.metadata?.name ?? ""
        if (reported.has(name) || !isReady(n)) continue
        const since = readySince.get(name) ?? Date.now()
        readySince.set(name, since)
        if (Date.now() - since < AFTER_READY_MS) continue
        reported.add(name)
        await report(
          name,
          (n.status?.conditions ?? []).map((c) => c.type)
        ).catch(() => reported.delete(name))
      }
      await sleep(250)
    }
  })()
  return {
    stop: async () => {
      on = false
      await loop
    }
  }
}
