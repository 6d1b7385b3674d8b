/**
 * The agent across a kube-apiserver crash and an etcd crash, on a cluster of this file's own (state in
 * .nodemend/reliability-agent; the shared cluster is never restarted). The shipped bundle runs for a kwok Node
 * with a fake host root; faults are real log lines through its sources: before the crash (a fork failure in
 * the kubelet journal -> KernelReady=False, a soft lockup on kmsg -> a SoftLockup Event), while the component
 * is down (a pod stuck terminating, twice, in the kubelet journal -> ContainerRuntimeReady=False; another soft
 * lockup) and after it is back (IPAMD without a service account token, three times, in ipamd.log ->
 * NetworkingReady=False; a third soft lockup). The component is killed (SIGKILL) and started again after 3-6 s
 * with its own command line (the mechanism of the controller's apiRestart.rtest.ts).
 *
 * Checked: every condition change lands (the one written while the API server was down too), the condition
 * of before the crash keeps its lastTransitionTime (not rewritten), each Event is one object (never two for one
 * occurrence), the agent never exits. Figure: time from the API server answering again to the condition
 * written during the outage being visible. The Event raised during the outage lands exactly once: a create the
 * API server could not take is retried with backoff (docs/agent-runtime.md, Events; it was lost before: bug 4).
 */
import { EventsV1Api, type EventsV1Event } from "@kubernetes/client-node"
import { appendFileSync } from "node:fs"
import { join } from "node:path"
import { clients, condition, createReadyFakeNode, deleteNode, waitFor } from "@nodemend/cluster-harness"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildBundle, JOURNAL_REMOTE, makeFakeHost, startAgent } from "../integration/agent-process.ts"
import { type ControlPlane, controlPlaneUp, sleep } from "./controlPlane.ts"

const LONG = process.env.NODEMEND_RELIABILITY_LONG === "1"
/** Trials per component: CI 1, long 5. */
const TRIALS = Number(process.env.NODEMEND_AGENT_RESTART_TRIALS ?? (LONG ? 5 : 1))
const BOOT = "6a1f0c2e-0000-4000-8000-00000000a217"
const IPAMD = "var/log/aws-routed-eni/ipamd.log"
const CONFIG = "{}\n"

const FORK_FAILED =
  'E1130 05:00:00.000000 1234 kuberuntime_manager.go:1] "Failed" err="fork/exec /usr/bin/runc: resource temporarily unavailable"'
const stuckTerminating = (pod: string) =>
  `I0410 08:12:19.511832    3102 kubelet_pods.go:1085] "Pod still has one or more containers in the non-exited state and will not be removed from desired state" pod="${pod}"`
const ipamdNoToken = () =>
  JSON.stringify({
    level: "error",
    ts: new Date().toISOString(),
    caller: "aws-k8s-agent/main.go:42",
    msg: "Failed to check API server connectivity: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable"
  })
/** The Event's note is the catalog message "CPU stuck for {duration}": a distinct duration per occurrence. */
const softLockup = (k: number) => `watchdog: BUG: soft lockup - CPU#${k} stuck for ${20 + k}s! [kworker:1]`

let cp: ControlPlane
let c: ReturnType<typeof clients>
let events: EventsV1Api

const record = (figures: Record<string, unknown>) => {
  const line = JSON.stringify({ long: LONG, at: new Date().toISOString(), ...figures })
  console.log(`RELIABILITY ${line}`)
  const file = process.env.NODEMEND_RELIABILITY_FIGURES
  if (file !== undefined && file !== "") appendFileSync(file, `${line}\n`)
}

const nodeEvents = async (name: string): Promise<EventsV1Event[]> =>
  (await events.listNamespacedEvent({ namespace: "default", fieldSelector: `regarding.name=${name}` })).items
const lockupEvents = async (name: string, cpu: number) =>
  (await nodeEvents(name)).filter(
    (e) => e.reason === "SoftLockup" && e.note?.includes(`stuck for ${20 + cpu}s`) === true
  )

const trial = async (component: "kube-apiserver" | "etcd", n: number) => {
  const { core } = c
  const revivedBefore = cp.revive()
  await waitFor("the API server answers", () => core.listNode({ limit: 1 }).then(() => true), {
    timeoutMs: 120_000,
    intervalMs: 500
  })
  const name = (await createReadyFakeNode(core)).metadata?.name ?? ""
  const host = makeFakeHost(BOOT)
  host.write(IPAMD, "")
  const agent = startAgent({
    nodeName: name,
    kubeconfig: cp.kubeconfig,
    hostRoot: host.root,
    config: host.writeConfig(CONFIG),
    bundle: true
  })
  const cond = async (type: string) => condition(await core.readNode({ name }), type)
  const waitCondition = (type: string, status: string, reason?: string, timeoutMs = 60_000) =>
    waitFor(
      `${type}=${status}${reason === undefined ? "" : `/${reason}`} on ${name}`,
      async () => {
        const x = await cond(type)
        return x?.status === status && (reason === undefined || x.reason === reason) ? x : undefined
      },
      { timeoutMs, intervalMs: 100 }
    ).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\nagent output:\n${agent.output().slice(-4000)}`)
    })
  const waitLockup = (cpu: number) =>
    waitFor(
      `SoftLockup CPU#${cpu} Event`,
      async () => {
        const l = await lockupEvents(name, cpu)
        return l.length > 0 ? l : undefined
      },
      { timeoutMs: 60_000, intervalMs: 200 }
    )
  try {
    for (const t of ["KernelReady", "ContainerRuntimeReady", "NetworkingReady"])
      await waitCondition(t, "True")

    // Before the crash.
    host.writeJournal("kubelet", FORK_FAILED)
    host.appendKmsg(softLockup(1))
    const kernelBefore = await waitCondition("KernelReady", "False", "ForkFailedOutOfPIDs")
    await waitLockup(1)

    // The crash; faults written while the component is down.
    const downMs = Math.round(3000 + Math.random() * 3000)
    await cp.crash(component)
    const downAt = Date.now()
    host.writeJournal("kubelet", stuckTerminating(`default/stuck-${n}`))
    host.writeJournal("kubelet", stuckTerminating(`default/stuck-${n}`))
    host.appendKmsg(softLockup(2))
    await sleep(Math.max(0, downMs - (Date.now() - downAt)))
    cp.launch(component)
    const launchedAt = Date.now()
    // Back = the first answered read of the Node; visible = the first read that shows the outage's condition.
    let backAt = 0
    const during = await waitFor(
      "ContainerRuntimeReady=False/PodStuckTerminating after the restart",
      async () => {
        const node = await core.readNode({ name }).catch(() => undefined)
        if (node === undefined) return undefined
        if (backAt === 0) backAt = Date.now()
        const x = condition(node, "ContainerRuntimeReady")
        return x?.status === "False" && x.reason === "PodStuckTerminating" ? x : undefined
      },
      { timeoutMs: 120_000, intervalMs: 100 }
    )
    const visibleAt = Date.now()

    // After the restart.
    for (let i = 0; i < 3; i++) appendFileSync(join(host.root, IPAMD), `${ipamdNoToken()}\n`)
    host.appendKmsg(softLockup(3))
    await waitCondition("NetworkingReady", "False", "IPAMDNotReady")
    await waitLockup(3)
    // The outage's Event lands by its create's backoff (0.5 s doubling to 30 s).
    await waitFor(
      "the outage's SoftLockup Event",
      async () => ((await lockupEvents(name, 2)).length > 0 ? true : undefined),
      {
        timeoutMs: 60_000,
        intervalMs: 500
      }
    )
    // Time for a late retry of anything from the outage to land (a duplicate would show here).
    await sleep(10_000)

    const kernelAfter = await cond("KernelReady")
    const lockups = await Promise.all([1, 2, 3].map((cpu) => lockupEvents(name, cpu)))
    const all = await nodeEvents(name)
    const notes = all.map((e) => `${e.reason}\u0000${e.note}`)
    const output = agent.output()
    const figures = {
      name: "agent-api-restart-trial",
      trial: n,
      component,
      downMs,
      apiBackAfterLaunchMs: backAt - launchedAt,
      conditionVisibleAfterApiBackMs: visibleAt - backAt,
      eventsBefore: lockups[0]!.length,
      eventsDuringOutage: lockups[1]!.length,
      eventsAfter: lockups[2]!.length,
      eventCreateFailuresLogged: output.split("event create failed").length - 1,
      conditionPatchFailuresLogged: output.split("condition patch failed").length - 1,
      agentExited: agent.child.exitCode !== null,
      revivedBefore
    }
    record(figures)
    // No loss of conditions: all three changes are on the Node, the first with its original transition time.
    expect(kernelAfter?.status).toBe("False")
    expect(kernelAfter?.reason).toBe("ForkFailedOutOfPIDs")
    expect(String(kernelAfter?.lastTransitionTime)).toBe(String(kernelBefore.lastTransitionTime))
    expect(during.reason).toBe("PodStuckTerminating")
    expect((await cond("NetworkingReady"))?.status).toBe("False")
    // Events: one object per occurrence, before, during and after the outage; no duplicate anywhere.
    expect(lockups[0]!.length).toBe(1)
    expect(lockups[2]!.length).toBe(1)
    expect(lockups[1]!.length).toBe(1)
    for (const l of lockups) for (const e of l) expect(e.series?.count ?? 1).toBe(1)
    expect(new Set(notes).size).toBe(notes.length)
    expect(agent.child.exitCode).toBeNull()
    return figures
  } finally {
    await agent.stop()
    host.cleanup()
    await deleteNode(core, name).catch(() => undefined)
  }
}

describe.skipIf(JOURNAL_REMOTE === undefined)(
  "the agent across an API server and an etcd restart (a cluster of this file's own)",
  () => {
    beforeAll(() => {
      buildBundle()
      cp = controlPlaneUp(".nodemend/reliability-agent")
      c = clients(cp.kubeconfig)
      events = c.kc.makeApiClient(EventsV1Api)
    }, 900_000)
    afterAll(() => {
      cp?.down()
    }, 120_000)

    it("kube-apiserver crashed and restarted: conditions land, Events not duplicated", async () => {
      for (let n = 1; n <= TRIALS; n++) await trial("kube-apiserver", n)
    })
    it("etcd crashed and restarted: conditions land, Events not duplicated", async () => {
      for (let n = 1; n <= TRIALS; n++) await trial("etcd", n)
    })
  }
)
