/** The NodeDiagnostic watch runs on the shared list+watch loop (`@nodemend/kube-access`, ADR 0011). */
export { listWatch } from "@nodemend/kube-access"
