import { KubeError } from "@nodemend/kube-access"

/** An error meant for the user: printed as is, exit code 1. */
export class PluginError extends Error {}

/** The HTTP status of a failed API call, else undefined. */
export const k8sCode = (e: unknown): number | undefined => (e instanceof KubeError ? e.code : undefined)

/** A failed API call's message (the call and the API server's Status message), else the error's message. */
export const k8sMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e))
