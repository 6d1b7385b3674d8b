// Types of faults.mjs, for the TypeScript tests that inject a fault the way `nodemend inject` does.
export type Where =
  | { readonly source: "kmsg" }
  | { readonly source: "journal"; readonly identifier: string }
  | { readonly source: "file"; readonly path: string }
  | { readonly source: "dcgm" }
export interface Fault {
  readonly name: string
  readonly summary: string
  readonly where: Where
  /** The lines its source writes (every fault but a DCGM violation). */
  readonly lines?: () => string[]
  readonly conditionType: string
  readonly reason: string
  readonly clears?: boolean
  readonly event?: boolean
}
export declare const FAULTS: readonly Fault[]
export declare const faultNamed: (name: string) => Fault | undefined
