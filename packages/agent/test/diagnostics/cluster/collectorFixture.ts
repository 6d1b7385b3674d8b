// The common setup of the diagnostics cluster tests (agent, repair-controller's capture before termination,
// kubectl-nodemend): the NodeDiagnostic CRD installed, a loopback server standing in for S3, a host root with
// planted secrets, a work dir, and the agent's collector run in-process for each test Node.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node"
import { kubeAccessFromKubeconfig } from "@nodemend/kube-access"
import { Effect, Exit, Scope } from "effect"
import {
  NodeDiagnosticController,
  type NodeDiagnosticControllerOptions
} from "../../../src/diagnostics/NodeDiagnosticController.ts"
import { makeKubeHttp } from "../../../src/k8s/kube-http.ts"
import { makeHostRoot } from "../fixtures.ts"
import { installNodeDiagnosticCrd } from "./crd.ts"
import { testKubeConfig, testKubeconfigPath, uniqueName } from "./kube.ts"
import { startUploadServer, type UploadServer } from "./uploadServer.ts"

export interface CollectorFixture {
  readonly kc: KubeConfig
  readonly core: CoreV1Api
  readonly server: UploadServer
  readonly hostRoot: string
  readonly workDir: string
  /** Creates a Node named `<name>-node-…`, labelled nodemend.io/test=<name>; close() deletes it. */
  readonly createNode: (labels?: Record<string, string>) => Promise<string>
  /** Runs the agent's collector for `nodeName` (allowlist: the upload server's /bucket/) until close(). */
  readonly startCollector: (
    nodeName: string,
    options?: Pick<NodeDiagnosticControllerOptions, "agentState" | "collectors">
  ) => Promise<void>
  /** Stops the collectors, deletes the Nodes, closes the upload server and removes the temp dirs. */
  readonly close: () => Promise<void>
}

/** `name` tells this test file's Nodes and work dir apart from the others'. */
export const startCollectorFixture = async (name: string): Promise<CollectorFixture> => {
  const kc = testKubeConfig()
  const core = kc.makeApiClient(CoreV1Api)
  await installNodeDiagnosticCrd(kc)
  const server = await startUploadServer()
  const hostRoot = await makeHostRoot()
  const workDir = await mkdtemp(join(tmpdir(), `nodemend-${name}-`))
  const scopes: Scope.Closeable[] = []
  const nodes: string[] = []
  return {
    kc,
    core,
    server,
    hostRoot,
    workDir,
    createNode: async (labels = {}) => {
      const node = uniqueName(`${name}-node`)
      await core.createNode({
        body: { metadata: { name: node, labels: { "nodemend.io/test": name, ...labels } } }
      })
      nodes.push(node)
      return node
    },
    startCollector: async (nodeName, options = {}) => {
      const scope = await Effect.runPromise(Scope.make())
      scopes.push(scope)
      await Effect.runPromise(
        NodeDiagnosticController({
          // The agent's own lean client, as in the binary.
          http: makeKubeHttp(kubeAccessFromKubeconfig(testKubeconfigPath())),
          nodeName,
          hostRoot,
          workDir,
          // The loopback stand-in for S3, by its address, port and folder (as an operator would name it).
          destinationAllowlist: [`${server.base}/bucket/`],
          ...options
        }).pipe(Scope.provide(scope))
      )
    },
    close: async () => {
      for (const s of scopes) await Effect.runPromise(Scope.close(s, Exit.void))
      for (const node of nodes) await core.deleteNode({ name: node }).catch(() => undefined)
      await server.close()
      await rm(hostRoot, { recursive: true, force: true })
      await rm(workDir, { recursive: true, force: true })
    }
  }
}
