import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { discoverKubeAccess, KubeAccessError, kubeAccessFromKubeconfig } from "../src/KubeAccess.ts"

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

describe("kubeconfig contexts and $KUBECONFIG lists", () => {
  const twoContexts = () => {
    const first = join(dir, "first")
    writeFileSync(
      first,
      `clusters:
- name: c1
  cluster: { server: "https://one:6443" }
contexts:
- name: one
  context: { cluster: c1, user: u1 }
current-context: one
users:
- name: u1
  user: { token: t1 }
`
    )
    const sub = join(dir, "sub")
    mkdirSync(sub)
    writeFileSync(join(sub, "tok"), "t2\n")
    const second = join(sub, "second")
    writeFileSync(
      second,
      `clusters:
- name: c2
  cluster: { server: "https://two:6443" }
contexts:
- name: two
  context: { cluster: c2, user: u2 }
current-context: two
users:
- name: u2
  user: { tokenFile: tok }
`
    )
    return { first, second }
  }

  it("a named context instead of the current one; merged files: the first current-context, paths per file", async () => {
    const { first, second } = twoContexts()
    expect(kubeAccessFromKubeconfig([first, second]).server).toBe("https://one:6443")
    const two = kubeAccessFromKubeconfig([first, second], "two")
    expect(two.server).toBe("https://two:6443")
    expect(await two.token()).toBe("t2")
    expect(() => kubeAccessFromKubeconfig(first, "two")).toThrow(/no context "two"/)
    // A file of the list may hold only credentials; the first file that names an entry wins.
    const creds = join(dir, "creds")
    writeFileSync(creds, "users:\n- name: u2\n  user: { token: from-creds }\n")
    expect(await kubeAccessFromKubeconfig([creds, first, second], "two").token()).toBe("from-creds")
    expect(() => kubeAccessFromKubeconfig(creds)).toThrow(/no context ""/)
  })

  it("discovery: the flag, else $KUBECONFIG (a list), else in-cluster or ~/.kube/config in the order asked", () => {
    const { first, second } = twoContexts()
    const saved = { KUBECONFIG: process.env.KUBECONFIG, HOST: process.env.KUBERNETES_SERVICE_HOST }
    try {
      process.env.KUBECONFIG = [join(dir, "absent"), second, first].join(delimiter)
      expect(discoverKubeAccess({ inClusterFirst: false }).access.server).toBe("https://two:6443")
      expect(discoverKubeAccess({ inClusterFirst: false }).paths).toEqual([second, first])
      expect(discoverKubeAccess({ path: first, inClusterFirst: true }).access.server).toBe("https://one:6443")
      process.env.KUBECONFIG = join(dir, "absent")
      process.env.KUBERNETES_SERVICE_HOST = "10.0.0.9"
      // In-cluster first reads the service account, which this machine does not have.
      expect(() => discoverKubeAccess({ inClusterFirst: true })).toThrow()
    } finally {
      if (saved.KUBECONFIG === undefined) delete process.env.KUBECONFIG
      else process.env.KUBECONFIG = saved.KUBECONFIG
      if (saved.HOST === undefined) delete process.env.KUBERNETES_SERVICE_HOST
      else process.env.KUBERNETES_SERVICE_HOST = saved.HOST
    }
  })
})
