/**
 * The plugin's connection to the API server, found the way kubectl finds it (--kubeconfig, then $KUBECONFIG,
 * then ~/.kube/config, then in-cluster; --context picks a context): the shared client (ADR 0011).
 */
import { discoverKubeAccess, KubeAccessError, type KubeHttp, makeKubeHttp } from "@nodemend/kube-access"
import { PluginError } from "./errors.ts"

export const connect = (path?: string, context?: string): KubeHttp => {
  try {
    const { access } = discoverKubeAccess({ path, context, inClusterFirst: false })
    return makeKubeHttp(access, { userAgent: "kubectl-nodemend" })
  } catch (e) {
    throw e instanceof KubeAccessError ? new PluginError(e.message) : e
  }
}
