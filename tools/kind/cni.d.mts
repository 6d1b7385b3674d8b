export interface KindNode {
  name: string
  podCIDR: string
  ip: string
}
export declare const cniConfig: (podCIDR: string) => {
  cniVersion: string
  name: string
  plugins: Array<
    { type: string; ipam?: { ranges: Array<Array<{ subnet: string }>> } } & Record<string, unknown>
  >
}
export declare const routesFor: (name: string, nodes: KindNode[]) => string[][]
export declare function configureNetwork(p: unknown, kubectl: unknown): Promise<KindNode[]>
