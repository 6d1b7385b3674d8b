// kubectl nodemend status / release for relapse holds (#28) against the real API server: a held ledger as the
// repair controller writes it, RBAC through a service account's token (every permission checked first, nothing
// changed without it), the ledger deleted as read, and the RepairHoldReleased Event naming who did it.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CoreV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node"
import {
  ledgerConfigMapName,
  RELAPSE_LEDGER_LABEL,
  type RelapseLedger,
  serializeLedger
} from "@nodemend/repair-controller"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  testKubeConfig,
  testKubeconfigPath,
  uniqueName
} from "../../../agent/test/diagnostics/cluster/kube.ts"
import { run } from "../../src/cli.ts"
import { serviceAccountKubeconfig } from "./serviceAccountKubeconfig.ts"

const kc = testKubeConfig()
const core = kc.makeApiClient(CoreV1Api)
const rbac = kc.makeApiClient(RbacAuthorizationV1Api)
const ns = uniqueName("relapse-controller")
const REASON = "NvidiaXID79Error"
let kubeconfig: string
let workDir: string

beforeAll(async () => {
  kubeconfig = testKubeconfigPath()
  workDir = await mkdtemp(join(tmpdir(), "nodemend-release-"))
  await core.createNamespace({ body: { metadata: { name: ns } } })
})
afterAll(async () => {
  await core.deleteNamespace({ name: ns }).catch(() => undefined)
  await rm(workDir, { recursive: true, force: true })
})

const writeHeldLedger = async (pool: string) => {
  const now = Date.now()
  const relapse = (i: number) => ({
    node: `${pool}-r${i}`,
    uid: `uid-${i}`,
    repairId: `repair-${i}`,
    repairedNode: `${pool}-n${i}`,
    kind: "replacement" as const,
    at: now - (3 - i) * 60_000,
    afterMs: 40_000
  })
  const ledger: RelapseLedger = {
    v: 1,
    pool,
    reason: REASON,
    conditionType: "AcceleratedHardwareReady",
    repairs: [],
    relapses: [relapse(0), relapse(1), relapse(2)],
    hold: {
      since: now - 30_000,
      evidence: [relapse(0), relapse(1), relapse(2)],
      threshold: 3,
      windowMs: 3_600_000
    }
  }
  await core.createNamespacedConfigMap({
    namespace: ns,
    body: {
      metadata: { name: ledgerConfigMapName(pool, REASON), labels: { [RELAPSE_LEDGER_LABEL]: "true" } },
      data: { ledger: serializeLedger(ledger) }
    }
  })
  return ledger
}

const ledgerExists = (pool: string) =>
  core.readNamespacedConfigMap({ namespace: ns, name: ledgerConfigMapName(pool, REASON) }).then(
    () => true,
    (e: { code?: number }) => {
      if (e.code === 404) return false
      throw e
    }
  )

const cli = async (config: string, ...argv: string[]) => {
  const out: string[] = []
  const err: string[] = []
  const code = await run([...argv, "--kubeconfig", config, "--controller-namespace", ns], {
    out: (t) => out.push(t),
    err: (t) => err.push(t)
  })
  return { code, out: out.join("\n"), err: err.join("\n") }
}

/** A kubeconfig for a service account that may only get ConfigMaps in the controller's namespace. */
const readOnlyKubeconfig = () =>
  serviceAccountKubeconfig(
    { kc, core, rbac },
    ns,
    "ledger-reader",
    ["get"],
    join(workDir, "ledger-reader.kubeconfig")
  )

describe("kubectl nodemend release", () => {
  it("status lists the hold with its release command; release deletes it and records who did it", async () => {
    const pool = uniqueName("pool")
    await writeHeldLedger(pool)
    const status = await cli(kubeconfig, "status", "-l", `nodemend.io/none=${pool}`)
    expect(status.code).toBe(0)
    expect(status.out).toContain("Held for relapse")
    expect(status.out).toMatch(
      new RegExp(`${pool}\\s+${REASON}\\s+\\S+\\s+3\\s+replacement ${pool}-r0 of ${pool}-n0`)
    )
    expect(status.out).toContain(`kubectl nodemend release ${pool} ${REASON} --controller-namespace ${ns}`)

    const r = await cli(kubeconfig, "release", pool, REASON)
    expect(r.err).toBe("")
    expect(r.code).toBe(0)
    expect(r.out).toContain(`deleted the relapse ledger of ${REASON} in ${pool}`)
    expect(r.out).toContain(`recorded Event RepairHoldReleased on Node ${pool}-r2`)
    expect(await ledgerExists(pool)).toBe(false)
    const events = (
      await core.listNamespacedEvent({
        namespace: "default",
        fieldSelector: `involvedObject.name=${pool}-r2,reason=RepairHoldReleased`
      })
    ).items
    expect(events).toHaveLength(1)
    expect(events[0]?.message).toContain(`released the relapse hold on ${REASON} in pool ${pool}`)

    const again = await cli(kubeconfig, "release", pool, REASON)
    expect(again.code).toBe(1)
    expect(again.err).toContain(`no relapse hold on ${REASON} in pool ${pool}`)
  })

  it("refuses without the permissions it needs, naming each, before changing anything", async () => {
    const pool = uniqueName("pool")
    await writeHeldLedger(pool)
    const reader = await readOnlyKubeconfig()
    const r = await cli(reader.path, "release", pool, REASON)
    expect(r.code).toBe(1)
    expect(r.err).toContain(
      `error: ${reader.user} may not release a relapse hold: missing permissions delete configmaps/`
    )
    expect(r.err).toContain("create events.events.k8s.io in namespace default")
    expect(r.err).toContain("Nothing was changed.")
    expect(await ledgerExists(pool)).toBe(true)
  })
})
