/**
 * @nodemend/kube-access: the one Kubernetes client of every nodemend binary (ADR 0011). Credentials
 * (KubeAccess), one keep-alive pool with JSON calls and watch streams (KubeHttp), paged lists, list+watch
 * with bookmarks / 410 relist / backoff, wire types, and Event helpers. The NodeDiagnostic API types are the
 * subpath `@nodemend/kube-access/NodeDiagnostic` (loaded only by code that serves or requests captures).
 */
export * from "./Events.ts"
export * from "./KubeAccess.ts"
export * from "./KubeError.ts"
export * from "./KubeHttp.ts"
export * from "./ListWatch.ts"
export * from "./PagedList.ts"
export * from "./Paths.ts"
export type * from "./types.ts"
