/** The NodeDiagnostic watch runs on the shared list+watch loop (`@nodemend/kube-access`, ADR 0010). */
export { listWatch } from "@nodemend/kube-access"
