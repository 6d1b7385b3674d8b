// Small helpers for the diagnostics cluster tests. The cluster comes from @nodemend/cluster-harness's
// globalSetup (see vitest.config.ts here), which provides the kubeconfig path; NODEMEND_KUBECONFIG reuses a
// running cluster.
import { randomBytes } from "node:crypto"
import { KubeConfig } from "@kubernetes/client-node"
import { inject } from "vitest"

declare module "vitest" {
  export interface ProvidedContext {
    nodemendKubeconfig: string
  }
}

export const testKubeconfigPath = (): string => {
  let path: string | undefined
  try {
    path = inject("nodemendKubeconfig")
  } catch {
    path = undefined
  }
  path ||= process.env.NODEMEND_KUBECONFIG
  if (!path) throw new Error("no cluster: run with the cluster vitest config or set NODEMEND_KUBECONFIG")
  return path
}

export const testKubeConfig = (): KubeConfig => {
  const kc = new KubeConfig()
  kc.loadFromFile(testKubeconfigPath())
  return kc
}

const RUN = `${process.pid.toString(36)}${randomBytes(2).toString("hex")}`

export const uniqueName = (prefix: string): string =>
  `${prefix}-${RUN}-${randomBytes(3).toString("hex")}`.toLowerCase().slice(0, 63)
