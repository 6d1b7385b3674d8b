/**
 * A keyed work queue in the manner of client-go: a key is queued at most once, never processed by two
 * workers at once (an add while processing re-queues it on `done`), and `addAfter` keeps only the earliest
 * timer per key. Requeue-after timers, not polling; they run on Effect's Clock (TestClock in tests).
 */
import { Clock, Duration, Effect, type Fiber } from "effect"

export interface WorkQueue {
  readonly add: (key: string) => void
  readonly addAfter: (key: string, ms: number) => void
  /**
   * The next key; `undefined` once shut down. An Effect, not a Promise: the worker resumes on its fiber's scheduler,
   * so a TestClock (the what-if replay) knows when the work a timer or an add started has settled.
   */
  readonly take: Effect.Effect<string | undefined>
  /** No key queued, none being processed. */
  readonly idle: () => boolean
  readonly done: (key: string) => void
  readonly shutdown: () => void
  readonly length: () => number
}

/** A queue whose timers run on the Clock of the calling fiber's context. */
export const makeWorkQueue: Effect.Effect<WorkQueue> = Effect.gen(function* () {
  const clock = yield* Clock.Clock
  return workQueueOn(clock, Effect.runForkWith(yield* Effect.context<never>()))
})

export const workQueueOn = (
  clock: Clock.Clock,
  runFork: (effect: Effect.Effect<void>) => Fiber.Fiber<void>
): WorkQueue => {
  const queue: string[] = []
  const queued = new Set<string>()
  const processing = new Set<string>()
  const dirty = new Set<string>()
  const timers = new Map<string, { at: number; fiber: Fiber.Fiber<void> }>()
  const waiters: Array<(k: string | undefined) => void> = []
  let closed = false

  const add = (key: string) => {
    if (closed) return
    if (processing.has(key)) {
      dirty.add(key)
      return
    }
    if (queued.has(key)) return
    const w = waiters.shift()
    if (w !== undefined) {
      processing.add(key)
      w(key)
      return
    }
    queued.add(key)
    queue.push(key)
  }

  return {
    add,
    addAfter: (key, ms) => {
      if (closed) return
      if (ms <= 0) return add(key)
      const at = clock.currentTimeMillisUnsafe() + ms
      const existing = timers.get(key)
      if (existing !== undefined && existing.at <= at) return
      existing?.fiber.interruptUnsafe()
      const fiber = runFork(
        clock.sleep(Duration.millis(ms)).pipe(
          Effect.andThen(
            Effect.sync(() => {
              timers.delete(key)
              add(key)
            })
          )
        )
      )
      timers.set(key, { at, fiber })
    },
    take: Effect.callback<string | undefined>((resume) => {
      if (closed) return resume(Effect.succeed(undefined))
      const key = queue.shift()
      if (key !== undefined) {
        queued.delete(key)
        processing.add(key)
        return resume(Effect.succeed(key))
      }
      // The worker yields to its scheduler first, never running on `add`'s stack: an informer callback that adds a
      // key must not run the reconcile inside itself (it would re-enter whatever called it).
      const waiter = (k: string | undefined) => resume(Effect.as(Effect.yieldNow, k))
      waiters.push(waiter)
      // An interrupted worker takes no key: one given to it meanwhile would never be done.
      return Effect.sync(() => {
        const i = waiters.indexOf(waiter)
        if (i >= 0) waiters.splice(i, 1)
      })
    }),
    idle: () => queue.length === 0 && processing.size === 0,
    done: (key) => {
      processing.delete(key)
      if (dirty.delete(key)) add(key)
    },
    shutdown: () => {
      closed = true
      for (const t of timers.values()) t.fiber.interruptUnsafe()
      timers.clear()
      for (const w of waiters.splice(0)) w(undefined)
    },
    length: () => queue.length
  }
}
