export { run, USAGE } from "./cli.ts"
export { kubeletProxyBundlePath, urlForNode } from "./nodeDiagnostics.ts"
