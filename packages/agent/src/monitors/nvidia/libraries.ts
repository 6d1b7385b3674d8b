/**
 * Which NVIDIA libraries this node has. Built once in the agent's main from the configured paths; a
 * library that fails to load is recorded with its typed error instead of failing the agent, because the
 * monitor degrades (NVML only, DCGM only) and, with neither, stops watching and says why.
 */
import { Dcgm, type DcgmApi, Nvml, type NvmlApi } from "@nodemend/dcgm-native"
import { Context, Effect, Layer } from "effect"

export interface NvidiaLibrariesShape {
  readonly dcgm: DcgmApi | undefined
  readonly nvml: NvmlApi | undefined
  /** Why a library is absent (LibraryMissing, VersionMismatch, init failure), one line each. */
  readonly problems: readonly string[]
}

export class NvidiaLibraries extends Context.Service<NvidiaLibraries, NvidiaLibrariesShape>()(
  "@nodemend/agent/NvidiaLibraries"
) {
  static readonly layer = (paths: { readonly dcgmLibraryPath: string; readonly nvmlLibraryPath: string }) =>
    Layer.effect(
      NvidiaLibraries,
      Effect.gen(function* () {
        const problems: string[] = []
        const scope = yield* Effect.scope
        const dcgm = yield* Layer.buildWithScope(Dcgm.layer(paths.dcgmLibraryPath), scope).pipe(
          Effect.map((ctx) => Context.get(ctx, Dcgm)),
          Effect.catch((e) => Effect.sync(() => void problems.push(e.message)))
        )
        const nvml = yield* Layer.buildWithScope(Nvml.layer(paths.nvmlLibraryPath), scope).pipe(
          Effect.map((ctx) => Context.get(ctx, Nvml)),
          Effect.catch((e) => Effect.sync(() => void problems.push(e.message)))
        )
        return NvidiaLibraries.of({ dcgm: dcgm ?? undefined, nvml: nvml ?? undefined, problems })
      })
    )
}
