/** API paths of the objects nodemend calls on (names and namespaces URL-encoded). */
const enc = encodeURIComponent

export const NODES_PATH = "/api/v1/nodes"
export const nodePath = (name: string): string => `${NODES_PATH}/${enc(name)}`

/** A namespaced collection (`kind` plural, e.g. `configmaps`) or one object in it, of core/v1 or `group/version`. */
export const namespacedPath = (apiVersion: string, kind: string, namespace: string, name?: string): string =>
  `${apiVersion === "v1" ? "/api/v1" : `/apis/${apiVersion}`}/namespaces/${enc(namespace)}/${kind}${name === undefined ? "" : `/${enc(name)}`}`
