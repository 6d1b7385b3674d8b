// `kubectl nodemend release <pool> <reason>` and the status lines for relapse holds (#28): pure decisions.
import type { ConfigMap } from "@nodemend/kube-access"
import { ledgerConfigMapName, type RelapseLedger, serializeLedger } from "@nodemend/repair-controller"
import { describe, expect, it } from "vitest"
import { run } from "../src/cli.ts"
import { holdRows, holdsOf, planRelease, releaseNote, releasePermissions } from "../src/relapseHolds.ts"
import { describePermission, missingPermissionsMessage } from "../src/repairActions.ts"

const NS = "nodemend-system"
const T0 = Date.parse("2026-01-01T00:00:00Z")
const relapse = (i: number) => ({
  node: `n${i}-r`,
  uid: `u${i}`,
  repairId: `r${i}`,
  repairedNode: `n${i}`,
  kind: "replacement" as const,
  at: T0 + i * 60_000,
  afterMs: 45_000
})
const ledger = (held: boolean, over: Partial<RelapseLedger> = {}): RelapseLedger => ({
  v: 1,
  pool: "gpu",
  reason: "NvidiaXID79Error",
  conditionType: "AcceleratedHardwareReady",
  repairs: [],
  relapses: [relapse(0), relapse(1), relapse(2)],
  ...(held
    ? {
        hold: {
          since: T0 + 3 * 60_000,
          evidence: [relapse(0), relapse(1), relapse(2)],
          threshold: 3,
          windowMs: 3600_000
        }
      }
    : {}),
  ...over
})
const cm = (
  l: RelapseLedger,
  meta: Record<string, string> = { uid: "cm-uid", resourceVersion: "42" }
): ConfigMap => ({
  metadata: { name: ledgerConfigMapName(l.pool, l.reason), namespace: NS, ...meta },
  data: { ledger: serializeLedger(l) }
})

describe("release: plan", () => {
  it("acts on a held ledger: deletes it as read, the Event on the latest relapsed node", () => {
    const p = planRelease("gpu", "NvidiaXID79Error", NS, cm(ledger(true)))
    expect(p).toMatchObject({
      _tag: "Act",
      configMap: { uid: "cm-uid", resourceVersion: "42" },
      eventNode: { name: "n2-r", uid: "u2" }
    })
  })

  it.each([
    ["no ledger", undefined, "no relapse hold on NvidiaXID79Error in pool gpu"],
    ["not held", cm(ledger(false)), "is not held"],
    [
      "unreadable",
      { metadata: { name: "x", uid: "u", resourceVersion: "1" }, data: { ledger: "{}" } },
      "not a relapse ledger"
    ],
    ["another pool's", cm(ledger(true, { pool: "cpu" })), "not of NvidiaXID79Error in gpu"],
    ["no resourceVersion", cm(ledger(true), { uid: "u" }), "refusing to delete it blind"]
  ])("refuses: %s", (_w, c, text) => {
    const p = planRelease("gpu", "NvidiaXID79Error", NS, c as ConfigMap | undefined)
    expect(p._tag).toBe("Refuse")
    if (p._tag === "Refuse") expect(p.message).toContain(text)
  })

  it("checks get and delete on that ledger and create on Events, and names what is missing", () => {
    const ps = releasePermissions("gpu", "NvidiaXID79Error", NS)
    expect(ps.map(describePermission)).toEqual([
      `get configmaps/${ledgerConfigMapName("gpu", "NvidiaXID79Error")} in namespace ${NS}`,
      `delete configmaps/${ledgerConfigMapName("gpu", "NvidiaXID79Error")} in namespace ${NS}`,
      "create events.events.k8s.io in namespace default"
    ])
    expect(missingPermissionsMessage("release", "alice", [{ permission: ps[1]! }])).toBe(
      `alice may not release a relapse hold: missing permission delete configmaps/${ledgerConfigMapName("gpu", "NvidiaXID79Error")} in namespace ${NS}. Nothing was changed.`
    )
  })

  it("the Event note says who released what, and the evidence", () => {
    const note = releaseNote(ledger(true), "alice")
    expect(note).toContain("alice released the relapse hold on NvidiaXID79Error in pool gpu")
    expect(note).toContain("replacement n2-r of n2 relapsed 45s after it came up (repair r2)")
  })

  it("usage errors", async () => {
    const err: string[] = []
    expect(await run(["release", "gpu"], { out: () => {}, err: (t) => err.push(t) })).toBe(1)
    expect(err.join("")).toContain("usage: kubectl nodemend release <pool> <reason>")
  })
})

describe("status: holds", () => {
  it("lists held ledgers only, with the evidence", () => {
    const holds = holdsOf([
      cm(ledger(true)),
      cm(ledger(false, { reason: "Other" })),
      { data: { ledger: "nope" } }
    ])
    expect(holds).toHaveLength(1)
    expect(holdRows(holds)[0]?.slice(0, 4)).toEqual(["gpu", "NvidiaXID79Error", "2026-01-01T00:03:00Z", "3"])
  })
})
