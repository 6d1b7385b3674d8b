/** The wire types of the objects the controller reads or writes: the shared client's (ADR 0011). */
export type {
  ConfigMap,
  Lease,
  LeaseSpec,
  List,
  Node,
  NodeCondition,
  ObjectMeta,
  Pod,
  Taint,
  Toleration
} from "@nodemend/kube-access"
export { microTime } from "@nodemend/kube-access"
