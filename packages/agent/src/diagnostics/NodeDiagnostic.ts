/** The NodeDiagnostic resource's API types live with the one Kubernetes client (ADR 0010). */
export * from "@nodemend/kube-access/NodeDiagnostic"
