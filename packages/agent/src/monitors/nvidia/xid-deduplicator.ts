/**
 * The shared XID deduplicator: the monitor's callback/NVML paths and the rules engine's `NVRM: Xid` kernel
 * lines pass every XID detection through `admit`; the same XID on the same GPU within 5 s passes once.
 */
import { Context, Effect, Layer, SynchronizedRef } from "effect"
import type { Detection, Finding } from "../../model.ts"
import { xidOfReason } from "./findings.ts"
import { emptyXidDedupe, normalizePci, observeXid, type XidSighting } from "./xid-dedupe.ts"

export class XidDeduplicator extends Context.Service<
  XidDeduplicator,
  {
    readonly admit: (sighting: XidSighting) => Effect.Effect<boolean>
    /**
     * For detections from any path: true for everything that is not an XID, and for the first sighting of an
     * XID (GPU from the subject when it is a PCI address). The rules engine routes its XID detections here.
     */
    readonly admitDetection: (d: Detection) => Effect.Effect<boolean>
  }
>()("@nodemend/agent/XidDeduplicator") {
  static readonly layer = Layer.effect(
    XidDeduplicator,
    Effect.gen(function* () {
      const ref = yield* SynchronizedRef.make(emptyXidDedupe)
      // Every path's PCI address in one form (NVML/DCGM `00000000:2A:00.0` vs the kernel's `0000:2a:00`)
      const admit = (sighting: XidSighting) =>
        SynchronizedRef.modify(ref, (state) => {
          const r = observeXid(state, { ...sighting, pci: normalizePci(sighting.pci) })
          return [r.report, r.state] as const
        })
      const admitDetection = (d: Detection) => {
        const xid = xidOfReason(d.reason)
        return xid === undefined ? Effect.succeed(true) : admit({ xid, pci: d.subject, atMs: d.observedAtMs })
      }
      return XidDeduplicator.of({ admit, admitDetection })
    })
  )
}

/**
 * Wraps a finding sink so XID detections from any other path (the rules engine's `NVRM: Xid` lines) pass
 * through the same deduplicator as the monitor's own: `sink = xidDedupedSink(dedupe, sink)` in the main.
 */
export const xidDedupedSink =
  (dedupe: XidDeduplicator["Service"], sink: (findings: readonly Finding[]) => Effect.Effect<void>) =>
  (findings: readonly Finding[]): Effect.Effect<void> =>
    Effect.filter(findings, (f) =>
      f._tag === "Detection" ? dedupe.admitDetection(f) : Effect.succeed(true)
    ).pipe(Effect.flatMap((kept) => (kept.length === 0 ? Effect.void : sink(kept))))
