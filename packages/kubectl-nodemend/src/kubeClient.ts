/** Loads the kubeconfig the way kubectl does (--kubeconfig, then $KUBECONFIG, then ~/.kube/config, then in-cluster). */
import { KubeConfig } from "@kubernetes/client-node"
import { PluginError } from "./errors.ts"

export const loadKubeConfig = (path?: string, context?: string): KubeConfig => {
  const kc = new KubeConfig()
  if (path) kc.loadFromFile(path)
  else kc.loadFromDefault()
  if (context) kc.setCurrentContext(context)
  const server = kc.getCurrentCluster()?.server
  // loadFromDefault silently falls back to http://localhost:8080 when it finds nothing.
  if (!server || server === "http://localhost:8080") {
    throw new PluginError("no kubeconfig found: pass --kubeconfig or set KUBECONFIG")
  }
  return kc
}
