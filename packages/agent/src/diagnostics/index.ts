// Diagnostics: on-demand log bundles and DCGM diagnostics driven by the NodeDiagnostic custom resource (docs/diagnostics.md).
// The agent main starts `NodeDiagnosticController` in its scope; nothing here runs on the detection path.
export type { Collector, CollectorDefaults, CollectorSource } from "./Collectors.ts"
export { COLLECTOR_DEFAULTS, defaultCollectors } from "./Collectors.ts"
export {
  type AllowedDestination,
  DEFAULT_DESTINATION_ALLOWLIST,
  decideDestination,
  parseAllowedDestination,
  parseAllowlist
} from "./DestinationPolicy.ts"
export { kubeletProxyBundlePath, NODE_BUNDLE_DIR, nodeBundleName } from "./Delivery.ts"
export {
  NodeDiagnosticController,
  nodeDiagnosticControllerLayer,
  type NodeDiagnosticControllerOptions,
  needsCapture,
  needsDcgmDiagnostic
} from "./NodeDiagnosticController.ts"
export {
  type DcgmDiagnosticOutcome,
  type DcgmDiagnosticRunner,
  dcgmDiagnosticOutcome,
  runDcgmDiagnostic
} from "./DcgmDiagnosticRun.ts"
export { redactionTransform, redactText } from "./Redaction.ts"
