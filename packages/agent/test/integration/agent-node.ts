/**
 * The unit every agent cluster test runs: a kwok Node that kwok reports Ready, a fake host root for it, and
 * the agent binary started for that Node with a config written into the host root.
 */
import type { CoreV1Api } from "@kubernetes/client-node"
import { createReadyFakeNode, deleteNode } from "@nodemend/cluster-harness"
import { type FakeHost, makeFakeHost, type RunningAgent, startAgent } from "./agent-process.ts"

export interface AgentNode {
  readonly name: string
  readonly host: FakeHost
  /** The agent started last, until stop(). */
  readonly agent: RunningAgent | undefined
  /** Writes `config` (YAML) as the agent's config file and starts the agent for this Node. */
  start(
    config: string,
    options?: { readonly env?: Readonly<Record<string, string>>; readonly bundle?: boolean }
  ): RunningAgent
  stop(): Promise<void>
  /** Stops the agent, removes the host root and deletes the Node. */
  close(): Promise<void>
}

export const createAgentNode = async (core: CoreV1Api, bootId: string): Promise<AgentNode> => {
  const name = (await createReadyFakeNode(core)).metadata!.name!
  const host = makeFakeHost(bootId)
  let agent: RunningAgent | undefined
  const stop = async () => {
    await agent?.stop()
    agent = undefined
  }
  return {
    name,
    host,
    get agent() {
      return agent
    },
    start: (config, options = {}) => {
      agent = startAgent({
        nodeName: name,
        hostRoot: host.root,
        config: host.writeConfig(config),
        ...options
      })
      return agent
    },
    stop,
    close: async () => {
      await stop()
      host.cleanup()
      await deleteNode(core, name)
    }
  }
}
