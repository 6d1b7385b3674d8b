// The test files' shared wiring to the C test double: an injector reset to 8 healthy GPUs before every test,
// and a DCGM session on the double for the length of one effect.
import { Effect } from "effect"
import { beforeEach, inject } from "vitest"
import { Dcgm } from "../src/dcgm.ts"
import { GpuDoubleInjector } from "./double/injector.ts"

export const doubles = inject("gpuDoubles")
export const injector = new GpuDoubleInjector(doubles)
export const DcgmDouble = Dcgm.layer(doubles.dcgm)
export const standalone = { _tag: "Standalone", address: "127.0.0.1:5555" } as const

/** Registers the per-test reset in the calling test file. */
export const resetDoublesBeforeEach = (): void =>
  beforeEach(() => {
    injector.reset()
    injector.setGpuCount(8)
  })

/** Runs `f` with a standalone session on the double; the session closes when `f` ends. */
export const withSession = <A, E>(
  f: (s: Effect.Success<ReturnType<Dcgm["Service"]["connect"]>>) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const dcgm = yield* Dcgm
    return yield* f(yield* dcgm.connect(standalone))
  }).pipe(Effect.scoped, Effect.provide(DcgmDouble))
