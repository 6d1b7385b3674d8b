/**
 * A process that holds a lease and then keeps its own thread busy, printing how many renewals happened while it
 * was busy and how leadership ended (test/leaseKeeper.test.ts runs it with Node 24):
 *   node --conditions=source test/leaseKeeperProbe.ts <busyMs> thread|inline
 * `thread`: renewals on the keeper's thread (controller/LeaseKeeper.ts, the controller's way); `inline`: on this
 * thread, as before. The Lease is in memory (every renewal answers after 5 ms): what is measured is the threads.
 */
import { setTimeout as sleep } from "node:timers/promises"
import { isMainThread, workerData } from "node:worker_threads"
import { Effect, Fiber } from "effect"
import { holdLeadership, type LeadershipEnd, type LeaseLock } from "../src/controller/LeaderElection.ts"
import {
  KEEPER_DATA,
  type KeeperData,
  keepLeadership,
  runLeaseKeeper
} from "../src/controller/LeaseKeeper.ts"

const lock: LeaseLock = {
  tryAcquireOrRenew: Effect.sleep("5 millis").pipe(Effect.as({ _tag: "Leading" as const }))
}
const lease = {
  namespace: "ns",
  name: "probe",
  identity: "probe",
  leaseDurationSeconds: 5,
  renewIntervalSeconds: 0.2
}

if (!isMainThread)
  runLeaseKeeper((workerData as Record<string, KeeperData>)[KEEPER_DATA] as KeeperData, () => lock)
else {
  const busyMs = Number(process.argv[2])
  const renewals: number[] = []
  const hold: Effect.Effect<LeadershipEnd> =
    process.argv[3] === "thread"
      ? keepLeadership(
          new URL(import.meta.url),
          { lease, kubeconfig: undefined },
          {
            onRenewed: (m) => renewals.push(m.at)
          }
        )
      : holdLeadership(lock, lease, { renewed: () => renewals.push(Date.now()) })
  const fiber = Effect.runFork(hold)
  await sleep(1500)
  const before = renewals.length
  const busyFrom = Date.now()
  while (Date.now() - busyFrom < busyMs) {
    // The controller's own work, as a wave of repairs and Node events keeps its thread.
  }
  const busyTo = Date.now()
  await sleep(1000)
  const exit = fiber.pollUnsafe()
  const end = exit?._tag === "Success" ? exit.value : undefined
  process.stdout.write(
    `${JSON.stringify({ before, during: renewals.filter((t) => t >= busyFrom && t <= busyTo).length, end })}\n`
  )
  await Effect.runPromise(Fiber.interrupt(fiber))
  process.exit(0)
}
