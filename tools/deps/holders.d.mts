export interface Holder {
  /** The file, relative to packages/repair-controller/src. */
  readonly file: string
  readonly factory: string
  readonly vars: ReadonlyArray<string>
}
export declare const SRC: string
export declare function scanHolders(): Holder[]
