/**
 * The agent's finding sinks, as main wires them. Every finding ends in the finding sink (overrides,
 * ConditionWriter, EventRecorder) behind the promoted-reason recovery. XIDs are deduplicated once: the
 * NVIDIA monitor admits its own (DCGM policy, NVML events) through the shared XidDeduplicator, so it gets
 * the sink directly; every other path (the rules engine's `NVRM: Xid` kernel lines) goes through
 * `xidDedupedSink`. Passing the monitor's XIDs through the wrapper too made every one a repeat of itself
 * and dropped it: no DCGM or NVML XID ever reached the API server. A filesystem fault is routed by its device
 * (the host's mountinfo under `files`): only the node's own filesystems set StorageReady.
 */
import { Effect, type Scope } from "effect"
import type { HostFiles } from "./checks/host-files.ts"
import type { AgentConfig } from "./config/schema.ts"
import type { ConditionWriter } from "./k8s/condition-writer.ts"
import type { EventRecorder } from "./k8s/event-recorder.ts"
import { makeFindingSink } from "./k8s/finding-sink.ts"
import { filesystemRouter } from "./mounts/filesystem-routing.ts"
import type { XidDeduplicator } from "./monitors/nvidia/xid-deduplicator.ts"
import { xidDedupedSink } from "./monitors/nvidia/xid-deduplicator.ts"
import { type FindingSink, withPromotedRecovery } from "./recovery/promoted-recovery.ts"

export interface FindingRoutes {
  /** For the NVIDIA monitor, which deduplicates its XIDs itself. */
  readonly nvidiaMonitor: FindingSink
  /** For the log rules and the periodic checks. */
  readonly others: FindingSink
}

export const findingRoutes = (
  config: AgentConfig,
  writer: ConditionWriter["Service"],
  recorder: EventRecorder["Service"],
  dedupe: XidDeduplicator["Service"],
  files: HostFiles
): Effect.Effect<FindingRoutes, never, Scope.Scope> =>
  Effect.map(
    withPromotedRecovery(config, makeFindingSink(config, writer, recorder, filesystemRouter(files))),
    (sink) => ({
      nvidiaMonitor: sink,
      others: xidDedupedSink(dedupe, sink)
    })
  )
