// The agent's systemd unit runs what the DaemonSet runs: the same bundle, V8 flags and literal environment
// (thread pool size, glibc malloc tuning). Only where it runs differs (host root, the kubelet's
// kubeconfig, a loopback health address), so those arguments are not compared.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { deployedRuntime } from "../../../tools/bundle/shipped.mjs"
import { DEPLOY_DIR } from "../src/index.ts"

const unit = readFileSync(join(DEPLOY_DIR, "agent", "nodemend-agent.service"), "utf8")
const directives = (name: string): string[] =>
  unit
    .split("\n")
    .filter((l) => l.startsWith(`${name}=`))
    .map((l) => l.slice(name.length + 1))
const daemonSet = deployedRuntime("agent/daemonset.yaml")

describe("deploy/agent/nodemend-agent.service = the DaemonSet's agent", () => {
  const execStart = directives("ExecStart")
  it("has one ExecStart that runs node on the bundle", () => {
    expect(execStart).toHaveLength(1)
    const words = execStart[0]!.split(" ")
    expect(words[0]).toMatch(/\/node$/)
    expect(words).toContain("/opt/nodemend/dist/nodemend-agent.mjs")
  })

  it("passes node the DaemonSet's V8 flags, in order", () => {
    const words = execStart[0]!.split(" ")
    const bundle = words.indexOf("/opt/nodemend/dist/nodemend-agent.mjs")
    expect(daemonSet.flags.length).toBeGreaterThan(0)
    expect(words.slice(1, bundle)).toEqual(daemonSet.flags)
  })

  it("sets the DaemonSet's literal environment", () => {
    const unitEnv = Object.fromEntries(
      directives("Environment")
        .flatMap((d) => d.split(" "))
        .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)])
    )
    expect(Object.keys(daemonSet.env).length).toBeGreaterThan(0)
    expect(unitEnv).toEqual(daemonSet.env)
  })
})
