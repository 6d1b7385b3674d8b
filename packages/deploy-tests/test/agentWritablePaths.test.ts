// The agent's root filesystem is read-only and /host is mounted read-only, yet a NodeDiagnostic writes twice:
// its spool and bundle under os.tmpdir() (/tmp in the image) and, for `destination: node`, the bundle under
// <host root>/var/log/nodemend. The DaemonSet (plain and the chart's default) must give exactly those two
// paths a writable mount, and nothing else of the host.
import { describe, expect, it } from "vitest"
import { NODE_BUNDLE_DIR } from "../../agent/src/diagnostics/Delivery.ts"
import { AWS_REQUIRED_VALUES, find, type KubeObject, loadManifests, render } from "../src/index.ts"

interface Mount {
  name: string
  mountPath: string
  readOnly?: boolean
}
interface Volume {
  name: string
  hostPath?: { path: string; type?: string }
  emptyDir?: { sizeLimit?: string }
}
interface PodSpec {
  containers: {
    args: string[]
    volumeMounts: Mount[]
    securityContext: { readOnlyRootFilesystem?: boolean }
  }[]
  volumes: Volume[]
}

const podSpec = (objects: ReadonlyArray<KubeObject>): PodSpec =>
  (find(objects, "DaemonSet", "nodemend-agent") as unknown as { spec: { template: { spec: PodSpec } } }).spec
    .template.spec

const hostRoot = (spec: PodSpec) =>
  spec.containers[0]!.args.find((a) => a.startsWith("--host-root="))!.slice("--host-root=".length)

describe.each([
  ["deploy/agent/daemonset.yaml", () => podSpec(loadManifests("agent"))],
  ["the chart's default render", () => podSpec(render({ values: AWS_REQUIRED_VALUES }))]
])("%s", (_name, load) => {
  const spec = load()
  const mounts = spec.containers[0]!.volumeMounts
  const volume = (name: string) => spec.volumes.find((v) => v.name === name)!
  const writable = mounts.filter((m) => !m.readOnly)

  it("keeps the root filesystem and the host read-only", () => {
    expect(spec.containers[0]!.securityContext.readOnlyRootFilesystem).toBe(true)
    const host = mounts.find((m) => m.mountPath === hostRoot(spec))!
    expect(host.readOnly).toBe(true)
    expect(volume(host.name).hostPath?.path).toBe("/")
  })

  it("mounts a writable emptyDir at the agent's temp directory", () => {
    // deploy/images/agent.Containerfile sets no TMPDIR, so node's os.tmpdir() is /tmp in the image.
    const tmp = mounts.find((m) => m.mountPath === "/tmp")
    expect(tmp?.readOnly).toBeFalsy()
    expect(volume(tmp!.name).emptyDir).toBeDefined()
  })

  it("mounts the node-destination bundle directory writable, over the read-only host, from that host path", () => {
    const bundles = mounts.find((m) => m.mountPath === `${hostRoot(spec)}/${NODE_BUNDLE_DIR}`)
    expect(bundles?.readOnly).toBeFalsy()
    expect(volume(bundles!.name).hostPath).toEqual({ path: `/${NODE_BUNDLE_DIR}`, type: "DirectoryOrCreate" })
  })

  it("writes nowhere else", () => {
    expect(writable.map((m) => m.mountPath).sort()).toEqual(["/host/var/log/nodemend", "/tmp"])
  })
})
