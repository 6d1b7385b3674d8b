/**
 * The plugin's view of NodeDiagnostic (nodediagnostics.nodemend.io/v1alpha1; the CRD is
 * deploy/crds/nodediagnostics.nodemend.io.yaml and the agent side packages/agent/src/diagnostics).
 */
import { Schema } from "effect"

export const GVR = { group: "nodemend.io", version: "v1alpha1", plural: "nodediagnostics" } as const
export const PLUGIN_LABEL = { "app.kubernetes.io/managed-by": "kubectl-nodemend" } as const

export const Completed = Schema.Struct({
  reason: Schema.Literals(["Success", "SuccessWithErrors", "Failure"]),
  message: Schema.String,
  startedAt: Schema.optionalKey(Schema.String),
  finishedAt: Schema.optionalKey(Schema.String),
  observedGeneration: Schema.optionalKey(Schema.Int)
})
export type Completed = typeof Completed.Type

export const NodeDiagnosticView = Schema.Struct({
  metadata: Schema.Struct({
    generation: Schema.optionalKey(Schema.Int),
    uid: Schema.optionalKey(Schema.String)
  }),
  status: Schema.optionalKey(
    Schema.Struct({
      captureStatuses: Schema.optionalKey(
        Schema.Array(
          Schema.Struct({
            type: Schema.String,
            state: Schema.Struct({
              running: Schema.optionalKey(Schema.Struct({ startedAt: Schema.String })),
              completed: Schema.optionalKey(Completed)
            })
          })
        )
      )
    })
  )
})
export type NodeDiagnosticView = typeof NodeDiagnosticView.Type

export type CaptureProgress =
  | { readonly _tag: "Pending" }
  | { readonly _tag: "Running"; readonly startedAt: string }
  | { readonly _tag: "Completed"; readonly completed: Completed }

/** Where a capture stands, for the generation we asked for. Pure. */
export const captureProgress = (nd: NodeDiagnosticView): CaptureProgress => {
  const generation = nd.metadata.generation ?? 1
  const log = nd.status?.captureStatuses?.find((s) => s.type === "Log")?.state
  const c = log?.completed
  if (c && (c.observedGeneration ?? 0) >= generation) return { _tag: "Completed", completed: c }
  if (log?.running) return { _tag: "Running", startedAt: log.running.startedAt }
  return { _tag: "Pending" }
}

export const nodeDiagnosticBody = (
  nodeName: string,
  destination: string,
  categories: ReadonlyArray<string>
) => ({
  apiVersion: `${GVR.group}/${GVR.version}`,
  kind: "NodeDiagnostic",
  metadata: { name: nodeName, labels: { ...PLUGIN_LABEL } },
  spec: { logCapture: { destination, categories: [...categories] } }
})

/** Path of a node-destination bundle through the API server's node proxy to the kubelet's /logs/ handler. */
export const kubeletProxyBundlePath = (nodeName: string): string =>
  `/api/v1/nodes/${encodeURIComponent(nodeName)}/proxy/logs/nodemend/${encodeURIComponent(`${nodeName}-logs.tar.gz`)}`

/** Fills `{node}` in a URL template (so one flag serves many nodes). */
export const urlForNode = (template: string, nodeName: string): string =>
  template.replaceAll("{node}", encodeURIComponent(nodeName))
