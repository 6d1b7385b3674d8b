export declare function debianMirror(sources?: string): string
export declare function buildNodeImage(tools: string): Promise<string>
