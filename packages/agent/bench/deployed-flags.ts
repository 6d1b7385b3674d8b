/**
 * How the agent is deployed, read from deploy/agent/daemonset.yaml (the container's `command`:
 * `node <flags> <bundle>`, and its plain `env` values), so benches and the bundle test run exactly what
 * nodes run: the V8 flags and the environment (thread pool size, glibc malloc tuning).
 */
import { readFileSync } from "node:fs"
import { parse } from "yaml"

interface Container {
  readonly command?: string[]
  readonly env?: { readonly name: string; readonly value?: string }[]
}

const agentContainer = (): { readonly path: URL; readonly container: Container } => {
  const path = new URL("../../../deploy/agent/daemonset.yaml", import.meta.url)
  const ds = parse(readFileSync(path, "utf8")) as {
    spec: { template: { spec: { containers: Container[] } } }
  }
  const container = ds.spec.template.spec.containers[0]
  if (container === undefined) throw new Error(`${path.pathname}: no container`)
  return { path, container }
}

export const deployedNodeFlags = (): readonly string[] => {
  const { path, container } = agentContainer()
  const command = container.command ?? []
  if (command[0] !== "node") throw new Error(`${path.pathname}: the agent's command does not start with node`)
  return command.slice(1).filter((a) => a.startsWith("--"))
}

/** The container's environment variables with a literal value (NODE_NAME comes from the pod, not here). */
export const deployedEnv = (): Readonly<Record<string, string>> =>
  Object.fromEntries(
    (agentContainer().container.env ?? []).flatMap((e) => (e.value === undefined ? [] : [[e.name, e.value]]))
  )
