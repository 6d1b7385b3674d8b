export declare const TOOLS_DIR: string
export declare const REPO_ROOT: string
export declare const VERSIONS: { kubernetes: string; etcd: string; kwok: string }
export declare const COMPONENTS: string[]
export declare function cacheKey(): string
export declare function cacheRoot(): string
export declare function binDir(): string
export declare const STAMP_FILE: string
export declare const BUILD_RECIPE: string
