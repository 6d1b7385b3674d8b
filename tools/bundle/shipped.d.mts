export declare function buildAsScripted(packageDir: string): string
export declare function deployedRuntime(manifest: string): {
  readonly flags: readonly string[]
  readonly env: Readonly<Record<string, string>>
}
export declare function bundlesBuilt(): boolean
export declare function shippedBundle(packageDir: string): string
