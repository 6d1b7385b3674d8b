/**
 * The unit every agent cluster test runs: a kwok Node that kwok reports Ready, a fake host root for it, and
 * the agent binary started for that Node with a config written into the host root.
 */
import type { CoreV1Api, V1NodeCondition } from "@kubernetes/client-node"
import { condition, createReadyFakeNode, deleteNode, waitFor } from "@nodemend/cluster-harness"
import {
  type FakeHost,
  failWithAgentOutput,
  makeFakeHost,
  type RunningAgent,
  startAgent
} from "./agent-process.ts"

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
  /**
   * Waits until the Node's condition `type` has `status` (and `reason`, when given); on a timeout the error
   * carries the tail of the agent's output. Default timeout 30 s.
   */
  waitForCondition(
    type: string,
    status: string,
    options?: { readonly reason?: string; readonly timeoutMs?: number }
  ): Promise<V1NodeCondition>
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
    waitForCondition: (type, status, { reason, timeoutMs = 30_000 } = {}) =>
      waitFor(
        `${type}=${status}${reason === undefined ? "" : `/${reason}`}`,
        async () => {
          const c = condition(await core.readNode({ name }), type)
          return c?.status === status && (reason === undefined || c.reason === reason) ? c : undefined
        },
        { timeoutMs, intervalMs: 100 }
      ).catch(failWithAgentOutput(agent)),
    close: async () => {
      await stop()
      host.cleanup()
      await deleteNode(core, name)
    }
  }
}
