// Shared pieces of the AWS-provider cluster tests: a fake cloud whose instances are kwok Nodes in the
// test cluster, with its admin client and its CLI, and cleanup of the Nodes it made.
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import type { CoreV1Api } from "@kubernetes/client-node"
import { kubeconfigPath } from "@nodemend/cluster-harness"
import {
  AdminClient,
  type AdminGroup,
  type FakeCloud,
  type FakeCloudOptions,
  kwokNodeMirror,
  startFakeCloud
} from "@nodemend/fake-cloud"
import { kubeAccessFromKubeconfig, makeKubeHttp } from "@nodemend/kube-access"

export const CLUSTER_ARN = "arn:aws:eks:us-west-2:111122223333:cluster/nodemend-e2e"
const FAKE_CLOUD_MAIN = fileURLToPath(new URL("../../../fake-cloud/src/main.ts", import.meta.url))
const NODE = fileURLToPath(new URL("../../../../node_modules/.bin/node", import.meta.url))

export interface ClusterFakeCloud {
  readonly url: string
  readonly store: FakeCloud["store"]
  /** Its S3 objects (presigned PUTs; `extra.s3Credentials` names the keys it accepts). */
  readonly objects: FakeCloud["objects"]
  readonly admin: AdminClient
  /** Runs the `nodemend-fake-cloud` CLI against this cloud; returns its parsed JSON output. */
  cli(...args: string[]): Promise<unknown>
  /** Injects `count` throttling errors into the EC2 `action` through the CLI. */
  throttleEc2(action: string, count: number): Promise<void>
  /**
   * An Auto Scaling group of `size` m5.large members from the fake cloud's launch template in two zones, with room
   * for one more (a repair's replacement); `tags` go on its instances (the pool label). `options`: another instance
   * type or launch template (one a test can break), more room.
   */
  createGroup(
    name: string,
    size: number,
    tags: Record<string, string>,
    options?: GroupOptions
  ): Promise<AdminGroup>
  /** Starts a zonal shift away from `zone` through the CLI; returns its id. */
  startZonalShift(zone: string, ...args: string[]): Promise<string>
  /** Deletes every Node the cloud created or adopted (they carry its instances' providerIDs), then stops it. */
  stop(): Promise<void>
}

export interface GroupOptions {
  readonly instanceType?: string
  readonly launchTemplateId?: string
  /** Members the group may grow by (maxSize - desired); default 1. */
  readonly room?: number
}

export async function startClusterFakeCloud(
  core: CoreV1Api,
  extra: Pick<FakeCloudOptions, "s3Credentials"> = {}
): Promise<ClusterFakeCloud> {
  const cloud = await startFakeCloud({
    ...extra,
    region: "us-west-2",
    bootDelayMs: 300,
    terminateDelayMs: 300,
    clusterArn: CLUSTER_ARN,
    // The test cluster, through the client the fake cloud's binary uses.
    mirror: kwokNodeMirror(
      makeKubeHttp(kubeAccessFromKubeconfig(kubeconfigPath()), { userAgent: "nodemend-fake-cloud" }),
      "us-west-2"
    ),
    log: (m) => console.warn(`fake-cloud: ${m}`)
  })
  const cli = async (...args: string[]): Promise<unknown> => {
    const { stdout } = await promisify(execFile)(
      NODE,
      ["--conditions=source", FAKE_CLOUD_MAIN, ...args, "--endpoint", cloud.url],
      {
        encoding: "utf8"
      }
    )
    return JSON.parse(stdout)
  }
  const admin = new AdminClient(cloud.url)
  return {
    url: cloud.url,
    store: cloud.store,
    objects: cloud.objects,
    admin,
    cli,
    throttleEc2: async (action, count) => {
      await cli("fault", "throttle", "--target", "ec2", "--action", action, "--count", String(count))
    },
    createGroup: (name, size, tags, options = {}) =>
      admin.createAutoScalingGroup({
        name,
        launchTemplateId: options.launchTemplateId ?? "lt-0123456789abcdef0",
        instanceType: options.instanceType ?? "m5.large",
        zones: ["us-west-2a", "us-west-2b"],
        minSize: 1,
        maxSize: size + (options.room ?? 1),
        desiredCapacity: size,
        tags
      }),
    startZonalShift: async (zone, ...args) =>
      ((await cli("shift", "start", "--zone", zone, ...args)) as { zonalShiftId: string }).zonalShiftId,
    stop: async () => {
      const names = new Set(cloud.store.describe([]).map((i) => i.nodeName))
      await Promise.all([...names].map((name) => core.deleteNode({ name }).catch(() => undefined)))
      await cloud.close()
    }
  }
}
