/**
 * The V8 flags the agent is deployed with, read from deploy/agent/daemonset.yaml (the container's
 * `command`: `node <flags> <bundle>`), so benches and the bundle test run exactly what nodes run.
 */
import { readFileSync } from "node:fs"
import { parse } from "yaml"

export const deployedNodeFlags = (): readonly string[] => {
  const path = new URL("../../../deploy/agent/daemonset.yaml", import.meta.url)
  const ds = parse(readFileSync(path, "utf8")) as {
    spec: { template: { spec: { containers: { command?: string[] }[] } } }
  }
  const command = ds.spec.template.spec.containers[0]?.command ?? []
  if (command[0] !== "node") throw new Error(`${path.pathname}: the agent's command does not start with node`)
  return command.slice(1).filter((a) => a.startsWith("--"))
}
