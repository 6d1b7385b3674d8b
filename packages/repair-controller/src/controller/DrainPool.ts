/**
 * A bounded number of drains in flight. Taints never wait for it (a repair taints when it starts); only the
 * Draining phase holds a slot. Repairs beyond the bound park and get a slot in order of when their repair
 * started (their toleration expiry, give or take the decision latency), earliest first; a freed slot goes
 * straight to the next in line and wakes it, so a repair that arrives later cannot overtake it.
 *
 * Why: a burst of hundreds of allowed repairs would otherwise list and evict on hundreds of nodes at once,
 * each holding its pod list and eviction fibers, for API load and memory that grow with the burst.
 */
export interface DrainPool {
  /** True when `id` holds a slot (now or already); otherwise it is parked and `wake(node)` runs later. */
  readonly enter: (id: string, node: string, order: number) => boolean
  /** Whether `id` holds a slot now; changes nothing. */
  readonly holds: (id: string) => boolean
  /** Frees `id`'s slot (or its place in line) and hands the slot to the earliest parked repair. */
  readonly leave: (id: string) => void
  readonly inFlight: () => number
  readonly waiting: () => number
}

interface Parked {
  readonly id: string
  readonly node: string
  readonly order: number
}

export const makeDrainPool = (max: number, wake: (node: string) => void): DrainPool => {
  const holders = new Set<string>()
  const parked: Parked[] = []
  const bound = Math.max(1, max)
  /** Hands free slots to the earliest parked repairs and wakes them. */
  const fill = () => {
    while (holders.size < bound && parked.length > 0) {
      const next = parked.shift()!
      holders.add(next.id)
      wake(next.node)
    }
  }
  return {
    enter: (id, node, order) => {
      if (holders.has(id)) return true
      if (holders.size < bound && parked.length === 0) {
        holders.add(id)
        return true
      }
      if (!parked.some((p) => p.id === id)) {
        // Sorted insert: bursts are hundreds, not millions.
        const at = parked.findIndex((p) => p.order > order || (p.order === order && p.node > node))
        parked.splice(at < 0 ? parked.length : at, 0, { id, node, order })
      }
      fill()
      return holders.has(id)
    },
    holds: (id) => holders.has(id),
    leave: (id) => {
      const i = parked.findIndex((p) => p.id === id)
      if (i >= 0) parked.splice(i, 1)
      holders.delete(id)
      fill()
    },
    inFlight: () => holders.size,
    waiting: () => parked.length
  }
}
