export declare function folderGraph(options?: { readonly counts?: boolean }): string[]
