export declare const IMAGES_DIR: string
export type ImageName = "agent" | "controller" | "fake-cloud"
export declare const IMAGES: Record<ImageName, { pkg: string }>
export declare function imageRef(name: ImageName): string
export declare function runtimePackages(code: string): string[]
export interface BuiltImage {
  name: ImageName
  ref: string
  digest: string
  archive: string
  archiveBytes: number
  layersBytes: number
  contextBytes: number
  runtimePackages: string[]
  /** SHA-256 of the bundle the image holds. */
  bundleSha256: string
  packageDirs: number
  seconds: number
}
export interface ImagesSummary {
  node: string
  base: { tag: string; debs: Record<string, string> }
  images: BuiltImage[]
  totalSeconds: number
}
export declare function buildImages(options?: {
  names?: ReadonlyArray<ImageName>
  outDir?: string
}): Promise<ImagesSummary>
