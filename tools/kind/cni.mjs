// The pod network of the locally assembled node image, in place of kindnetd (whose Go module cannot be fetched
// here): per node, a ptp CNI config over the podCIDR kube-controller-manager allocated it, and a route to every
// other node's podCIDR through that node's address, written into the node containers after they joined.
// Routes are not persistent: a node container that restarts needs `kind:up` again (it re-applies them).
const CONFLIST = "/etc/cni/net.d/10-nodemend.conflist"

/** The CNI config of one node (pure). ipMasq: pods reach the host (and what runs there) from the node's address. */
export const cniConfig = (podCIDR) => ({
  cniVersion: "0.4.0",
  name: "nodemend",
  plugins: [
    {
      type: "ptp",
      ipMasq: true,
      mtu: 1500,
      ipam: {
        type: "host-local",
        dataDir: "/run/cni-ipam-state",
        routes: [{ dst: "0.0.0.0/0" }],
        ranges: [[{ subnet: podCIDR }]]
      }
    },
    { type: "portmap", capabilities: { portMappings: true } }
  ]
})

/** The routes node `name` needs: every other node's podCIDR via its address (pure). */
export const routesFor = (name, nodes) =>
  nodes.filter((n) => n.name !== name).map((n) => ["route", "replace", n.podCIDR, "via", n.ip])

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** Nodes with their podCIDR and InternalIP, once every node has a podCIDR (kube-controller-manager assigns them). */
async function nodesWithCidrs(p, kubectl, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const items = JSON.parse(kubectl(p, ["get", "nodes", "-o", "json"])).items
    const nodes = items.map((n) => ({
      name: n.metadata.name,
      podCIDR: n.spec.podCIDR,
      ip: n.status.addresses?.find((a) => a.type === "InternalIP")?.address
    }))
    if (nodes.length > 0 && nodes.every((n) => n.podCIDR && n.ip)) return nodes
    if (Date.now() > deadline)
      throw new Error(
        `nodes without a podCIDR or address after ${timeoutMs / 1000} s: ${JSON.stringify(nodes)}`
      )
    await sleep(1000)
  }
}

/** Writes each node's CNI config and routes (idempotent: `route replace`, the same file). */
export async function configureNetwork(p, kubectl) {
  const nodes = await nodesWithCidrs(p, kubectl)
  for (const n of nodes) {
    const exec = (args, input) => p.run(p.engine, ["exec", "-i", n.name, ...args], input)
    exec(
      ["sh", "-c", `mkdir -p /etc/cni/net.d && cat > ${CONFLIST}`],
      `${JSON.stringify(cniConfig(n.podCIDR), null, 2)}\n`
    )
    for (const r of routesFor(n.name, nodes)) exec(["ip", ...r])
  }
  return nodes
}
