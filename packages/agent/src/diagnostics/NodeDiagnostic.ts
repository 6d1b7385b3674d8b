/** The NodeDiagnostic resource's API types live with the one Kubernetes client (ADR 0011). */
export * from "@nodemend/kube-access/NodeDiagnostic"
