export declare const PROMETHEUS_BIN_DIR: string
export declare const PODMONITORS_FILE: string
export declare const RULES_FILE: string
export declare const INTERVAL: string
export declare function relabelConfig(r: Record<string, unknown>): Record<string, unknown>
export declare function readPodMonitors(path?: string): Record<string, unknown>[]
export declare function targetsFile(targetsDir: string, monitor: string): string
export declare function scrapeJob(
  monitor: Record<string, unknown>,
  i: number,
  targetsDir: string
): Record<string, unknown>
export declare const FAKE_CLOUD_JOB: string
export declare function staticJob(job: string, targetsDir: string): Record<string, unknown>
export declare function prometheusConfig(opts: {
  rulesPath: string
  targetsDir: string
  monitors?: Record<string, unknown>[]
}): Record<string, unknown>
export declare function ruleFile(path?: string): { groups: unknown[] }
export declare function scaleFor(file: { groups: unknown[] }, divisor: number): { groups: unknown[] }
export declare function prepare(
  dir: string,
  port: number
): { targetsDir: string; configPath: string; args: string[] }
export interface ScrapeTarget {
  /** host:port */
  readonly address: string
  readonly namespace: string
  readonly pod: string
  readonly node?: string
  readonly container?: string
  /** The container port's name (the PodMonitor endpoint's `port`). */
  readonly port: string
}
export declare function deleteAllSeries(url: string): Promise<void>
export declare function writeTargets(
  targetsDir: string,
  monitor: string,
  targets: ReadonlyArray<ScrapeTarget>
): void
export declare function writeStaticTargets(
  targetsDir: string,
  job: string,
  addresses: ReadonlyArray<string>
): void
