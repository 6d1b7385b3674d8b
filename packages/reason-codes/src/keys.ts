/**
 * The label, annotation, taint and tag keys, and the non-finding Event reasons, that users and their automation
 * see on Nodes, ConfigMaps, Events and EC2 instances. Defined here once, so every nodemend component and every customer spells them the same
 * way; recorded in api/catalog.lock.json, so renaming one is a breaking change like renaming a reason code.
 */

/** Node annotation: `"true"` keeps the repair controller away from the node (it records why and does nothing). */
export const DO_NOT_REPAIR_ANNOTATION = "nodemend.io/do-not-repair"

/** Taint the repair controller puts on a node it is repairing, before the drain. */
export const REPAIR_TAINT_KEY = "nodemend.io/repair"
export const REPAIR_TAINT_EFFECT = "NoSchedule"

/** ConfigMap label (`"true"`) on the repair controller's journal, one ConfigMap per node under repair. */
export const REPAIR_JOURNAL_LABEL = "nodemend.io/repair-journal"

/** EC2 tag on a replacement instance: the id of the instance it replaces. */
export const REPLACES_TAG = "nodemend.io/replaces"

/** Label on a replacement Node made by the kwok cloud provider: the name of the Node it replaces. */
export const REPLACEMENT_OF_LABEL = "nodemend.io/replacement-of"

/** Annotation the kwok cloud provider sets (RFC 3339 time) when it "reboots" a Node. */
export const KWOK_REBOOTED_AT_ANNOTATION = "nodemend.io/kwok-rebooted-at"

/** `reportingController` of the agent's Events. */
export const AGENT_REPORTING_CONTROLLER = "nodemend.io/agent"

/** `reportingController` of the repair controller's Events; only its service account may write it. */
export const REPAIR_CONTROLLER_REPORTING_CONTROLLER = "nodemend.io/repair-controller"

/**
 * `reason` of the agent's Normal Event that says, per monitor and reason, how many findings its Event budgets
 * refused in the last interval (at most one a minute, only when something was refused).
 */
export const EVENTS_THROTTLED_REASON = "EventsThrottled"

/**
 * The condition type of a repair the repair controller plans for a cloud scheduled event (EC2 DescribeInstanceStatus):
 * the controller's own, never written by the agent or kubelet; it names the plan in the repair's record, Events and
 * metrics (`condition` label).
 */
export const SCHEDULED_EVENT_CONDITION_TYPE = "EC2ScheduledEvent"

/**
 * The reason of a repair planned for an EC2 scheduled event, per event code: what the repair's record, Events and
 * metrics name it by, and the key of a `reasons.<reason>` override in the controller's config.
 */
export const SCHEDULED_EVENT_REASONS = {
  "instance-retirement": "EC2InstanceRetirementScheduled",
  "instance-stop": "EC2InstanceStopScheduled",
  "system-reboot": "EC2SystemRebootScheduled",
  "instance-reboot": "EC2InstanceRebootScheduled",
  "system-maintenance": "EC2SystemMaintenanceScheduled"
} as const

/** What the controller does by default for each scheduled event (a `reasons.<reason>.action` overrides it). */
export const SCHEDULED_EVENT_ACTIONS = {
  "instance-retirement": "Replace",
  "instance-stop": "Replace",
  "system-reboot": "Reboot",
  "instance-reboot": "Reboot",
  "system-maintenance": "None"
} as const

/** `reason` of the repair controller's Event on a Node whose machine has a scheduled event it plans a repair for. */
export const REPAIR_PLANNED_REASON = "RepairPlanned"

/** `reason` of its Warning when a planned repair has not started by the event's NotBefore. */
export const SCHEDULED_EVENT_UNHANDLED_REASON = "ScheduledEventUnhandled"

/**
 * The condition type of a repair someone asked for with a RepairRequest (`kubectl nodemend repair`): the
 * controller's own, read from the request (which a node cannot write), never from the Node.
 */
export const REPAIR_REQUESTED_CONDITION_TYPE = "RepairRequested"

/** The reason of a requested repair that names no catalog reason code; default action Replace. */
export const MANUAL_REPAIR_REASON = "ManualRepairRequested"

/** Well-known Kubernetes label: the node's availability zone name. */
export const ZONE_LABEL = "topology.kubernetes.io/zone"

/** Well-known EKS label: the node's availability zone id (stable across accounts, unlike the name). */
export const ZONE_ID_LABEL = "topology.k8s.aws/zone-id"

/** Well-known Kubernetes label: the node's instance type. */
export const INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"

/** Karpenter's pool label; the repair controller's default `poolLabel`, by which the breaker counts nodes. */
export const DEFAULT_POOL_LABEL = "karpenter.sh/nodepool"

export type KeyKind =
  | "node-annotation"
  | "node-label"
  | "node-taint"
  | "configmap-label"
  | "ec2-tag"
  | "event-reporting-controller"
  | "event-reason"
  | "repair-condition-type"
  | "repair-reason"

export interface KeyInfo {
  readonly key: string
  readonly kind: KeyKind
  /** Who defines the key: nodemend's own, or a well-known key nodemend reads or writes. */
  readonly owner: "nodemend" | "kubernetes" | "aws" | "karpenter"
  /** Taint effect, for a taint. */
  readonly effect?: string
  readonly description: string
}

/** Every key above with what it is, for documentation, the lock and the JSON catalog. */
export const KEYS = [
  {
    key: DO_NOT_REPAIR_ANNOTATION,
    kind: "node-annotation",
    owner: "nodemend",
    description: 'Set to "true" on a Node to keep the repair controller from repairing it.'
  },
  {
    key: REPAIR_TAINT_KEY,
    kind: "node-taint",
    owner: "nodemend",
    effect: REPAIR_TAINT_EFFECT,
    description: "Put on a Node under repair before it is drained; pods that tolerate it are not evicted."
  },
  {
    key: REPAIR_JOURNAL_LABEL,
    kind: "configmap-label",
    owner: "nodemend",
    description: 'Marks (value "true") the repair controller\'s journal ConfigMaps in its namespace.'
  },
  {
    key: REPLACES_TAG,
    kind: "ec2-tag",
    owner: "nodemend",
    description: "On a replacement EC2 instance: the id of the instance it replaces."
  },
  {
    key: REPLACEMENT_OF_LABEL,
    kind: "node-label",
    owner: "nodemend",
    description: "On a replacement Node made by the kwok provider: the name of the Node it replaces."
  },
  {
    key: KWOK_REBOOTED_AT_ANNOTATION,
    kind: "node-annotation",
    owner: "nodemend",
    description: "Set by the kwok provider to the time it rebooted the Node."
  },
  {
    key: AGENT_REPORTING_CONTROLLER,
    kind: "event-reporting-controller",
    owner: "nodemend",
    description: "reportingController of the agent's Events."
  },
  {
    key: REPAIR_CONTROLLER_REPORTING_CONTROLLER,
    kind: "event-reporting-controller",
    owner: "nodemend",
    description: "reportingController of the repair controller's Events (RepairStarted, RepairBlocked, ...)."
  },
  {
    key: EVENTS_THROTTLED_REASON,
    kind: "event-reason",
    owner: "nodemend",
    description:
      "reason of the agent's Normal Event naming, per monitor and reason, the findings its Event budgets refused in the last interval."
  },
  {
    key: SCHEDULED_EVENT_CONDITION_TYPE,
    kind: "repair-condition-type",
    owner: "nodemend",
    description:
      "The repair controller's condition type of a repair it plans for an EC2 scheduled event; read from the cloud, never from the Node."
  },
  {
    key: SCHEDULED_EVENT_REASONS["instance-retirement"],
    kind: "repair-reason",
    owner: "nodemend",
    description:
      "A planned repair for EC2's instance-retirement event; default action Replace (capacity first)."
  },
  {
    key: SCHEDULED_EVENT_REASONS["instance-stop"],
    kind: "repair-reason",
    owner: "nodemend",
    description: "A planned repair for EC2's instance-stop event; default action Replace (capacity first)."
  },
  {
    key: SCHEDULED_EVENT_REASONS["system-reboot"],
    kind: "repair-reason",
    owner: "nodemend",
    description: "A planned repair for EC2's system-reboot event; default action Reboot (drained first)."
  },
  {
    key: SCHEDULED_EVENT_REASONS["instance-reboot"],
    kind: "repair-reason",
    owner: "nodemend",
    description: "A planned repair for EC2's instance-reboot event; default action Reboot (drained first)."
  },
  {
    key: SCHEDULED_EVENT_REASONS["system-maintenance"],
    kind: "repair-reason",
    owner: "nodemend",
    description: "EC2's system-maintenance event: reported, not repaired by default (action None)."
  },
  {
    key: REPAIR_PLANNED_REASON,
    kind: "event-reason",
    owner: "nodemend",
    description:
      "reason of the repair controller's Event on a Node whose machine has an EC2 scheduled event: the event, its window and when the repair is due."
  },
  {
    key: SCHEDULED_EVENT_UNHANDLED_REASON,
    kind: "event-reason",
    owner: "nodemend",
    description:
      "reason of the repair controller's Warning when a planned repair has not started by the event's NotBefore (held by a gate or a budget)."
  },
  {
    key: REPAIR_REQUESTED_CONDITION_TYPE,
    kind: "repair-condition-type",
    owner: "nodemend",
    description:
      "The repair controller's condition type of a repair a person or a workload asked for with a RepairRequest; read from the request, never from the Node."
  },
  {
    key: MANUAL_REPAIR_REASON,
    kind: "repair-reason",
    owner: "nodemend",
    description:
      "A requested repair that names no catalog reason code (kubectl nodemend repair --reason ManualRepairRequested); default action Replace."
  },
  {
    key: ZONE_LABEL,
    kind: "node-label",
    owner: "kubernetes",
    description:
      "The Node's availability zone name; the zonal-shift gate reads it, and a repair checks it against the cloud."
  },
  {
    key: ZONE_ID_LABEL,
    kind: "node-label",
    owner: "aws",
    description: "The Node's availability zone id; matched against ARC zonal shifts."
  },
  {
    key: INSTANCE_TYPE_LABEL,
    kind: "node-label",
    owner: "kubernetes",
    description: "The Node's instance type; the NVIDIA monitor derives the expected GPU count from it."
  },
  {
    key: DEFAULT_POOL_LABEL,
    kind: "node-label",
    owner: "karpenter",
    description: "The default pool label: the breaker counts unhealthy nodes per value of it."
  }
] as const satisfies readonly KeyInfo[]
