import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { KubeAccessError, kubeAccessFromKubeconfig } from "../src/KubeAccess.ts"

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "nodemend-kubeconfig-"))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const kubeconfig = (user: string, cluster = "    certificate-authority: ca.crt\n") => {
  const path = join(dir, "kubeconfig")
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://10.0.0.1:6443/
${cluster}contexts:
- name: ctx
  context: { cluster: c, user: u }
current-context: ctx
users:
- name: u
  user:
${user}`
  )
  return path
}

describe("kubeconfig", () => {
  it("client certificate files resolve against the kubeconfig's directory; inline data is base64", async () => {
    writeFileSync(join(dir, "ca.crt"), "CA")
    writeFileSync(join(dir, "client.crt"), "CERT")
    const a = kubeAccessFromKubeconfig(
      kubeconfig(
        `    client-certificate: client.crt\n    client-key-data: ${Buffer.from("KEY").toString("base64")}\n`
      )
    )
    expect(a.server).toBe("https://10.0.0.1:6443")
    expect(a.ca?.toString()).toBe("CA")
    expect(a.cert?.toString()).toBe("CERT")
    expect(a.key?.toString()).toBe("KEY")
    expect(await a.token()).toBeUndefined()
  })

  it("token, token file and exec credential plugins", async () => {
    writeFileSync(join(dir, "ca.crt"), "CA")
    expect(await kubeAccessFromKubeconfig(kubeconfig("    token: abc\n")).token()).toBe("abc")
    writeFileSync(join(dir, "tok"), "from-file\n")
    expect(await kubeAccessFromKubeconfig(kubeconfig("    tokenFile: tok\n")).token()).toBe("from-file")
    const plugin = join(dir, "plugin.sh")
    writeFileSync(
      plugin,
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-'$MY_ENV'","expirationTimestamp":"2999-01-01T00:00:00Z"}}'\n`
    )
    chmodSync(plugin, 0o755)
    const a = kubeAccessFromKubeconfig(
      kubeconfig(
        `    exec:\n      command: ./plugin.sh\n      apiVersion: client.authentication.k8s.io/v1\n      env: [{ name: MY_ENV, value: x }]\n`
      )
    )
    expect(await a.token()).toBe("exec-x")
    expect(await a.token()).toBe("exec-x")
  })

  it("names what is wrong", () => {
    expect(() => kubeAccessFromKubeconfig(join(dir, "missing"))).toThrow(KubeAccessError)
    writeFileSync(join(dir, "bad"), "current-context: nope\nclusters: []\ncontexts: []\n")
    expect(() => kubeAccessFromKubeconfig(join(dir, "bad"))).toThrow(/no context "nope"/)
  })
})
