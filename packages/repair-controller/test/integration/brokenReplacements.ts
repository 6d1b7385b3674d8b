// A pool whose launch template is broken, on the cluster tests' kwok Nodes: every new Node of the pool comes up Ready,
// then shows the defect: by default the fault its original was repaired for (KernelReady=False, written here as its
// agent would); a test may pass another (a GPU fault, a GPU missing from allocatable).
import type { CoreV1Api } from "@kubernetes/client-node"
import { isReady, setKernelReady, sleep } from "./helpers.ts"

export interface BrokenReplacements {
  /** The Nodes given the fault so far, in order. */
  readonly faulted: readonly string[]
  /** The launch template is fixed: no Node gets the fault from now on (resolves once the injection has stopped). */
  readonly fix: () => Promise<void>
}

/** Each Ready Node that `labelSelector` selects, but for those in `existing`, gets the defect once. */
export const breakReplacements = (
  core: CoreV1Api,
  labelSelector: string,
  existing: ReadonlySet<string> = new Set(),
  defect: (name: string) => Promise<unknown> = (name) => setKernelReady(core, name, "False")
): BrokenReplacements => {
  const faulted: string[] = []
  let broken = true
  const injection = (async () => {
    while (broken) {
      for (const n of (await core.listNode({ labelSelector })).items) {
        const name = n.metadata?.name ?? ""
        if (!broken || existing.has(name) || faulted.includes(name) || !isReady(n)) continue
        faulted.push(name)
        await defect(name)
      }
      await sleep(250)
    }
  })()
  return {
    faulted,
    fix: async () => {
      broken = false
      await injection
    }
  }
}
