/**
 * What a journal writer waits on (SightingStore, PlannedRepairStore): set when something changed, so the writer
 * wakes only then. A writer that woke every second almost always found nothing to write, and a simulated week of
 * the what-if replay woke it 600,000 times.
 */
import { type Effect, Latch } from "effect"

export interface DirtyFlag {
  readonly set: () => void
  /** Whether it was set, clearing it (a failed write sets it again). */
  readonly take: () => boolean
  /** Waits until it is set. */
  readonly whenSet: Effect.Effect<void>
}

export const makeDirtyFlag = (): DirtyFlag => {
  const latch = Latch.makeUnsafe(false)
  let dirty = false
  return {
    set: () => {
      dirty = true
      latch.openUnsafe()
    },
    take: () => {
      const was = dirty
      dirty = false
      // Open until a take finds nothing: the writer's next round closes it.
      if (!was) latch.closeUnsafe()
      return was
    },
    whenSet: latch.await
  }
}
