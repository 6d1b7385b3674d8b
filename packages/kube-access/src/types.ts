/**
 * The parts of Kubernetes objects nodemend reads or writes, as they are on the wire (JSON): times are RFC 3339
 * strings. We do not use @kubernetes/client-node's model types for them: those declare `Date` for the time
 * fields its deserializer converts, which a plain JSON object never holds (ADR 0011).
 */

export interface ObjectMeta {
  name?: string
  generateName?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  creationTimestamp?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  deletionTimestamp?: string | null
  ownerReferences?: Array<{ kind: string; name?: string; uid?: string; apiVersion?: string }>
  managedFields?: unknown
  finalizers?: unknown
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

/**
 * A core/v1 Event as listed from `/api/v1/namespaces/<ns>/events` (events.k8s.io/v1 Events read back through
 * core/v1: `note` is `message`, `reportingController` is `reportingComponent`, `regarding` is `involvedObject`).
 */
export interface CoreEvent {
  metadata?: ObjectMeta
  involvedObject?: { kind?: string; name?: string; uid?: string; namespace?: string }
  type?: string
  reason?: string
  message?: string
  count?: number
  eventTime?: string | null
  firstTimestamp?: string | null
  lastTimestamp?: string | null
  series?: { count?: number; lastObservedTime?: string }
  reportingComponent?: string
  source?: { component?: string; host?: string }
}

export interface List<T> {
  metadata?: { resourceVersion?: string; continue?: string }
  items: T[]
}
