/** A lane step: workspace package, npm script, and environment variables the step must not inherit. */
export type LaneStep =
  | readonly [string, string]
  | readonly [string, string, { readonly unset?: ReadonlyArray<string> }]
export declare const CLUSTER_LANES: ReadonlyArray<ReadonlyArray<LaneStep>>
export declare const REAL_NODE_STEP: LaneStep
export interface WorkspacePackage {
  readonly name: string
  readonly dir?: string
  readonly scripts?: Readonly<Record<string, string>>
}
export declare function uncovered(
  packages: ReadonlyArray<WorkspacePackage>,
  lanes?: ReadonlyArray<ReadonlyArray<LaneStep>>
): string[]
export declare function workspacePackages(): WorkspacePackage[]
export declare function runLanes(
  env: NodeJS.ProcessEnv,
  options: {
    readonly serial?: boolean
    readonly logDir: string
    readonly lanes?: ReadonlyArray<ReadonlyArray<LaneStep>>
  }
): Promise<Array<{ taskId: string; package: string; task: string; directory: string; log: string }>>
