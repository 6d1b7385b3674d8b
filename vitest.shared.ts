// Shared vitest settings: resolve workspace packages to their TypeScript sources (the `source` export condition).
const conditions = ["source", "node", "development|production"]

export const sourceResolve = {
  resolve: { conditions },
  ssr: { resolve: { conditions } }
}
