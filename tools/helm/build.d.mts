export declare const HELM_VERSION: string
export declare function helmPath(): string
export declare function isCached(path?: string): boolean
export declare function build(): Promise<string>
