/**
 * The plugin's side of NodeDiagnostic: the resource itself (GVR, Schema, request body, capture progress) is
 * @nodemend/kube-access/NodeDiagnostic, shared with the agent and the repair controller.
 */

/** The label on every NodeDiagnostic the plugin creates. */
export const PLUGIN_LABEL = { "app.kubernetes.io/managed-by": "kubectl-nodemend" } as const

/** Path of a node-destination bundle through the API server's node proxy to the kubelet's /logs/ handler. */
export const kubeletProxyBundlePath = (nodeName: string): string =>
  `/api/v1/nodes/${encodeURIComponent(nodeName)}/proxy/logs/nodemend/${encodeURIComponent(`${nodeName}-logs.tar.gz`)}`

/** Fills `{node}` in a URL template (so one flag serves many nodes). */
export const urlForNode = (template: string, nodeName: string): string =>
  template.replaceAll("{node}", encodeURIComponent(nodeName))
