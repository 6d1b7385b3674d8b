#!/usr/bin/env node
/**
 * nodemend-controller: the repair controller binary (`--help`; program.ts).
 *
 * One file, two roles (one shipped bundle, ADR 0007): the controller on the main thread, and the lease keeper's
 * thread (controller/LeaseKeeper.ts, ADR 0020), which starts this same file and must load only what renewing
 * needs. So the controller is imported only where it runs: the bundle evaluates a dynamically imported module
 * when it is imported, and the keeper never imports it.
 */
import { isMainThread, workerData } from "node:worker_threads"
import { makeLeaseLock } from "./controller/LeaderElection.ts"
import { KEEPER_DATA, type KeeperData, runLeaseKeeper } from "./controller/LeaseKeeper.ts"
import { loadKubeAccess, makeKube } from "./kube/Kube.ts"

const keeper = isMainThread ? undefined : (workerData as Record<string, KeeperData | undefined>)[KEEPER_DATA]
if (keeper !== undefined)
  runLeaseKeeper(keeper, (lease) =>
    makeLeaseLock(makeKube(loadKubeAccess(keeper.kubeconfig).access, lease.identity), lease)
  )
else (await import("./program.ts")).runCli(process.argv.slice(2), new URL(import.meta.url))
