/**
 * Runs a koffi function on koffi's worker pool. Every DCGM/NVML call that may wait on a vendor thread goes
 * through here, so the JS main thread is never blocked while a DCGM thread waits for it inside a callback.
 */
import { Effect } from "effect"
import type koffi from "koffi"
import type { LibraryHandle } from "koffi"

export type NativeFunction = ReturnType<LibraryHandle["func"]>
/** A koffi type: a name such as "uint32_t", a TypeObject, or a direction marker. */
export type TypeSpec = Parameters<typeof koffi.out>[0]

/**
 * Arguments of native calls still running. koffi hands a Buffer's or typed array's memory to the native
 * function as it is and keeps no reference to it: a caller interrupted mid-call (a session torn down while a
 * poll is in flight) would let the GC free memory the vendor library is still writing (heap corruption).
 * Pinned here from the call until it returns.
 */
const pinned = new Set<readonly unknown[]>()

/** The call's return value; a koffi marshalling error (a bug here, not a vendor error) is a defect. */
export const callAsync = <R>(fn: NativeFunction, ...args: readonly unknown[]): Effect.Effect<R> =>
  callAsyncThen<R>(() => {}, fn, ...args)

/**
 * callAsync, and `afterReturn` as soon as the native call has returned, also when the calling fiber was
 * interrupted meanwhile: a native call cannot be cancelled, so what it uses (a registered callback) must
 * outlive it, and an interrupted caller must not wait for it (teardown never blocks on a vendor call).
 */
export const callAsyncThen = <R>(
  afterReturn: () => void,
  fn: NativeFunction,
  ...args: readonly unknown[]
): Effect.Effect<R> =>
  Effect.callback<R>((resume) => {
    pinned.add(args)
    fn.async(...args, (err: unknown, result: R) => {
      pinned.delete(args)
      afterReturn()
      resume(err ? Effect.die(err) : Effect.succeed(result))
    })
  })

/** Declares `name`, or returns undefined when the library does not export it (feature detection). */
export const optionalFunc = (
  lib: LibraryHandle,
  name: string,
  ret: TypeSpec,
  args: TypeSpec[]
): NativeFunction | undefined => {
  try {
    return lib.func(name, ret, args)
  } catch {
    return undefined
  }
}
