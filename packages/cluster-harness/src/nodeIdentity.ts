/**
 * A node's own credentials, as a kubelet holds them: a client certificate for `system:node:<name>` in
 * `system:nodes`, issued through the CertificateSigningRequest API (signer kube-apiserver-client-kubelet) and
 * approved by the test's admin. Requests with it pass the Node authorizer and NodeRestriction, exactly as an
 * attacker with root on that node would send them.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CertificatesV1Api, CoreV1Api, KubeConfig } from "@kubernetes/client-node"
import { uniqueName } from "./testRun.ts"
import { waitFor } from "./waitFor.ts"

/** Key and CSR for the node's subject, made with openssl (CI installs it for the cluster's PKI). */
const keyAndCsr = (nodeName: string): { key: string; csr: string } => {
  const dir = mkdtempSync(join(tmpdir(), "node-id-"))
  try {
    execFileSync(
      "openssl",
      ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"].concat([
        "-keyout",
        join(dir, "node.key"),
        "-out",
        join(dir, "node.csr"),
        "-subj",
        `/O=system:nodes/CN=system:node:${nodeName}`
      ]),
      { stdio: ["ignore", "ignore", "pipe"] }
    )
    return {
      key: readFileSync(join(dir, "node.key"), "utf8"),
      csr: readFileSync(join(dir, "node.csr"), "utf8")
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const APPROVED = () => ({
  type: "Approved",
  status: "True",
  reason: "NodemendTest",
  message: "node identity for a security test",
  lastUpdateTime: new Date()
})

/** A KubeConfig that authenticates as node `nodeName` against the cluster `admin` points at. */
export async function nodeIdentity(admin: KubeConfig, nodeName: string): Promise<KubeConfig> {
  const certs = admin.makeApiClient(CertificatesV1Api)
  const { key, csr } = keyAndCsr(nodeName)
  const name = uniqueName("node-csr")
  await certs.createCertificateSigningRequest({
    body: {
      metadata: { name },
      spec: {
        request: Buffer.from(csr).toString("base64"),
        signerName: "kubernetes.io/kube-apiserver-client-kubelet",
        usages: ["digital signature", "client auth"],
        expirationSeconds: 3600
      }
    }
  })
  // kube-controller-manager's csrapproving may approve it first (the requester may create node client
  // certificates); otherwise the admin approves it here.
  await waitFor(
    `approval of ${name}`,
    async () => {
      const csr = await certs.readCertificateSigningRequest({ name })
      if (csr.status?.conditions?.some((c) => c.type === "Approved") === true) return true
      return certs
        .replaceCertificateSigningRequestApproval({
          name,
          body: { ...csr, status: { conditions: [APPROVED()] } }
        })
        .then(
          () => true,
          () => undefined
        )
    },
    { timeoutMs: 30_000, intervalMs: 200 }
  )
  const cert = await waitFor(
    `certificate for system:node:${nodeName}`,
    async () => (await certs.readCertificateSigningRequest({ name })).status?.certificate,
    { timeoutMs: 30_000, intervalMs: 200 }
  )
  await certs.deleteCertificateSigningRequest({ name }).catch(() => undefined)
  const cluster = admin.getCurrentCluster()
  if (cluster === null) throw new Error("the admin kubeconfig names no cluster")
  const kc = new KubeConfig()
  kc.loadFromOptions({
    clusters: [cluster],
    users: [
      {
        name: `system:node:${nodeName}`,
        certData: cert,
        keyData: Buffer.from(key).toString("base64")
      }
    ],
    contexts: [{ name: "node", cluster: cluster.name, user: `system:node:${nodeName}` }],
    currentContext: "node"
  })
  return kc
}

/** The node's CoreV1Api. */
export const nodeCore = async (admin: KubeConfig, nodeName: string): Promise<CoreV1Api> =>
  (await nodeIdentity(admin, nodeName)).makeApiClient(CoreV1Api)
