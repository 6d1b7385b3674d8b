// Types of controllerConfig.mjs, for the controller's config test (TypeScript) that decodes what the demo writes.
export declare const REGION: string
export declare const CLUSTER_ARN: string
export declare const TOLERATIONS: Readonly<Record<string, number>>
export declare const controllerConfigYaml: (settings: {
  readonly namespace: string
  readonly nodeSelector: string
  readonly leaseName: string
  readonly metricsPort: number
  readonly cloudUrl: string
}) => string
