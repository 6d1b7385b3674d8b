export interface FailedTest {
  readonly file: string
  readonly name: string
  readonly message: string
}
export interface FailedTask {
  readonly taskId: string
  readonly package: string
  readonly task: string
  readonly directory: string
  /** The task's log, where it is not turbo's. */
  readonly log?: string
}
export declare function failedTests(reports: ReadonlyArray<unknown>, lines?: number): FailedTest[]
export declare function failedTasks(summary: unknown): FailedTask[]
export declare function latestSummary(since: number): unknown
export declare function taskLogTail(task: FailedTask, lines?: number): string
export declare function renderFailures(
  tests: ReadonlyArray<FailedTest>,
  tasks: ReadonlyArray<FailedTask>,
  tail?: (task: FailedTask) => string
): string
export declare function logExcerpt(text: string, lines?: number, errorLines?: number): string
