export declare const CLUSTER_LANES: ReadonlyArray<ReadonlyArray<readonly [string, string]>>
export interface WorkspacePackage {
  readonly name: string
  readonly dir?: string
  readonly scripts?: Readonly<Record<string, string>>
}
export declare function uncovered(
  packages: ReadonlyArray<WorkspacePackage>,
  lanes?: ReadonlyArray<ReadonlyArray<readonly [string, string]>>
): string[]
export declare function workspacePackages(): WorkspacePackage[]
export declare function runLanes(
  env: NodeJS.ProcessEnv,
  options: { readonly serial?: boolean; readonly logDir: string }
): Promise<Array<{ taskId: string; package: string; task: string; directory: string; log: string }>>
