export interface FileTime {
  readonly file: string
  readonly ms: number
  readonly tests: number
  readonly failed: number
}
export declare function fileTimes(reports: ReadonlyArray<unknown>): FileTime[]
export declare function packageTimes(
  rows: ReadonlyArray<FileTime>
): Array<{ pkg: string; ms: number; files: number }>
export declare function render(rows: ReadonlyArray<FileTime>, top?: number): string
export declare function readReports(dir: string): unknown[]
