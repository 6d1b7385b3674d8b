// Types of controllerConfig.mjs, for the controller's config test (TypeScript) that decodes what the demo writes.
export declare const REGION: string
export declare const CLUSTER_ARN: string
export declare const TOLERATIONS: Readonly<Record<string, number>>
export interface PoolSettings {
  readonly maxUnhealthyPercent: number
  readonly maxInFlight: string
}
export declare const POOL_SETTINGS: Readonly<Record<"general" | "gpu", PoolSettings>>
export declare const controllerConfigYaml: (settings: {
  readonly namespace: string
  readonly nodeSelector: string
  readonly leaseName: string
  readonly metricsPort: number
  readonly cloudUrl: string
  readonly pools?: Readonly<Record<string, PoolSettings>>
}) => string
