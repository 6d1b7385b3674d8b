/**
 * The parts of Kubernetes objects the controller reads or writes, as they are on the wire (JSON): times are
 * RFC 3339 strings. Everything else the API server sends is ignored (and dropped from cached Nodes).
 */

export interface ObjectMeta {
  name?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  deletionTimestamp?: string | null
  ownerReferences?: Array<{ kind: string; name?: string; uid?: string; apiVersion?: string }>
  managedFields?: unknown
  finalizers?: unknown
  generation?: number
}

export interface Taint {
  key: string
  value?: string
  effect: string
  timeAdded?: string
}

export interface NodeCondition {
  type: string
  status: string
  reason?: string
  message?: string
  lastTransitionTime?: string
  lastHeartbeatTime?: string
}

export interface Node {
  apiVersion?: string
  kind?: string
  metadata?: ObjectMeta
  spec?: { providerID?: string; taints?: Taint[]; unschedulable?: boolean; [k: string]: unknown }
  status?: { conditions?: NodeCondition[]; [k: string]: unknown }
}

export interface Toleration {
  key?: string
  operator?: string
  value?: string
  effect?: string
}

export interface Pod {
  metadata?: ObjectMeta
  spec?: { priorityClassName?: string; tolerations?: Toleration[]; nodeName?: string }
  status?: { phase?: string }
}

export interface ConfigMap {
  apiVersion?: string
  kind?: string
  metadata?: ObjectMeta
  data?: Record<string, string>
}

export interface LeaseSpec {
  holderIdentity?: string
  leaseDurationSeconds?: number
  acquireTime?: string
  renewTime?: string
  leaseTransitions?: number
}

export interface Lease {
  apiVersion?: string
  kind?: string
  metadata?: ObjectMeta
  spec?: LeaseSpec
}

export interface List<T> {
  metadata?: { resourceVersion?: string; continue?: string }
  items: T[]
}

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits (the API server rejects milliseconds). */
export const microTime = (ms: number = Date.now()): string => new Date(ms).toISOString().replace(/Z$/, "000Z")
