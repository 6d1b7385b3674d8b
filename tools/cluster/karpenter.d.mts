// Types for karpenter.mjs (consumed by @nodemend/cluster-harness).
export declare const KARPENTER: { module: string; version: string; goToolchain: string }
export declare const KARPENTER_RECIPE: string
export declare function karpenterCacheKey(): string
export declare function karpenterDir(): string
export declare function karpenterBinDir(dir?: string): string
export declare function karpenterCrdsDir(dir?: string): string
export declare function isKarpenterCached(dir?: string): boolean
export declare function karpenterCrdFiles(dir?: string): string[]
export declare function buildKarpenter(): Promise<string>
