export declare const PODMAN_RUNROOT: string
export declare const PODMAN_CNI_CONFLIST: string
export declare function hardLimit(name: string, limits?: string): number | undefined
export declare function containersConf(dir: string, limits?: string): string
export declare const storageConf: (dir: string) => string
export declare function podmanEnv(dir?: string): NodeJS.ProcessEnv
export declare function dockerRuns(): boolean
export declare const podmanInstalled: () => boolean
export declare function storedImage(ref: string, dir?: string): boolean
