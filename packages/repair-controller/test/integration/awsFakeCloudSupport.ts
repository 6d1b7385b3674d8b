// Shared pieces of the AWS-provider cluster tests: a fake cloud whose instances are kwok Nodes in the
// test cluster, its CLI, and cleanup of the Nodes it made.
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import type { CoreV1Api, KubeConfig } from "@kubernetes/client-node"
import { type FakeCloud, kwokNodeMirror, startFakeCloud } from "@nodemend/fake-cloud"

export const CLUSTER_ARN = "arn:aws:eks:us-west-2:111122223333:cluster/nodemend-e2e"
const FAKE_CLOUD_MAIN = fileURLToPath(new URL("../../../fake-cloud/src/main.ts", import.meta.url))
const NODE = fileURLToPath(new URL("../../../../node_modules/.bin/node", import.meta.url))

export function startClusterFakeCloud(kc: KubeConfig): Promise<FakeCloud> {
  return startFakeCloud({
    region: "us-west-2",
    bootDelayMs: 300,
    terminateDelayMs: 300,
    clusterArn: CLUSTER_ARN,
    mirror: kwokNodeMirror(kc, "us-west-2"),
    log: (m) => console.warn(`fake-cloud: ${m}`)
  })
}

/** Runs the `nodemend-fake-cloud` CLI against `cloud`; returns its parsed JSON output. */
export async function fakeCloudCli(cloud: FakeCloud, ...args: string[]): Promise<unknown> {
  const { stdout } = await promisify(execFile)(NODE, [FAKE_CLOUD_MAIN, ...args, "--endpoint", cloud.url], {
    encoding: "utf8"
  })
  return JSON.parse(stdout)
}

/** Injects `count` throttling errors into the EC2 `action` through the CLI. */
export async function throttleEc2(cloud: FakeCloud, action: string, count: number): Promise<void> {
  await fakeCloudCli(
    cloud,
    "fault",
    "throttle",
    "--target",
    "ec2",
    "--action",
    action,
    "--count",
    String(count)
  )
}

/** Starts a zonal shift away from `zone` through the CLI; returns its id. */
export async function startZonalShift(cloud: FakeCloud, zone: string, ...args: string[]): Promise<string> {
  const shift = (await fakeCloudCli(cloud, "shift", "start", "--zone", zone, ...args)) as {
    zonalShiftId: string
  }
  return shift.zonalShiftId
}

/** Deletes every Node the fake cloud created or adopted (they carry its instances' providerIDs), then stops it. */
export async function stopClusterFakeCloud(core: CoreV1Api, cloud: FakeCloud): Promise<void> {
  const names = new Set(cloud.store.describe([]).map((i) => i.nodeName))
  await Promise.all([...names].map((name) => core.deleteNode({ name }).catch(() => undefined)))
  await cloud.close()
}
