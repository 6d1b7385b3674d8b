/** The controller's Kubernetes errors are the shared client's (`@nodemend/kube-access`, ADR 0011). */
export { httpKubeError, KubeError, transportKubeError } from "@nodemend/kube-access"
