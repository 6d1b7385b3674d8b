export declare function isCached(dir?: string): boolean
export declare function build(): Promise<string>
