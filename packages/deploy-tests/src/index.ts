export {
  ApiError,
  type ApplyClient,
  type DryRunClient,
  FIELD_MANAGER,
  makeApplyClient,
  makeDryRunClient
} from "./dryRunApply.ts"
export {
  AWS_REQUIRED_VALUES,
  CHART_DIR,
  find,
  type HelmResult,
  helm,
  type KubeObject,
  lint,
  parseObjects,
  type RenderOptions,
  render,
  template
} from "./helm.ts"
export { DEPLOY_DIR, loadManifests } from "./manifests.ts"
