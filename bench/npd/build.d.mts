export declare const NPD_VERSION: string
export declare function npdDir(): string
export declare function npdPath(): string
export declare function npdConfigDir(): string
export declare function build(): Promise<string>
