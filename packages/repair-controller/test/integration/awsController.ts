// The repair controller of the AWS-provider cluster tests, in process, on the fake cloud: one config shape (the
// tests' second-scale drain, zonal-shift and breaker timings, the fake cloud's endpoints), composed as main.ts
// composes it for `cloudProvider: aws`, and the EC2 client and RunInstances call the tests launch their pools with.
import type { _InstanceType } from "@aws-sdk/client-ec2"
import { kubeconfigPath } from "@nodemend/cluster-harness"
import { Effect, Fiber, Layer, Result } from "effect"
import { Ec2Sdk } from "../../src/cloud/aws/awsSdk.ts"
import { AwsCloudProvider, decodeAwsConfig } from "../../src/cloud/aws/index.ts"
import { decodeConfig } from "../../src/config/ConfigFile.ts"
import type { ControllerConfig } from "../../src/config/ControllerConfig.ts"
import { startController } from "../../src/controller/Controller.ts"
import { Kube, loadKubeAccess, makeKube } from "../../src/kube/Kube.ts"
import { type LogCaptureHook, noLogCaptureLayer } from "../../src/repair/LogCaptureHook.ts"
import { CLUSTER_ARN } from "./awsFakeCloudSupport.ts"

const REGION = "us-west-2"
export const CREDENTIALS = { accessKeyId: "AKIDFAKEE2E", secretAccessKey: "fake-secret" }

/** The default credential chain reads these first (no IMDS, no profile files). */
export const useFakeCredentials = (): void => {
  process.env.AWS_ACCESS_KEY_ID = CREDENTIALS.accessKeyId
  process.env.AWS_SECRET_ACCESS_KEY = CREDENTIALS.secretAccessKey
}

/** An EC2 client of the fake cloud at `url` (destroy it when done). */
export const fakeEc2 = (url: string) =>
  new Ec2Sdk.EC2Client({ region: REGION, endpoint: url, credentials: CREDENTIALS })

/** The fake cloud's subnets, one a zone: us-west-2a, b and c. */
export const FAKE_SUBNETS = [
  "subnet-0fake00000000000a",
  "subnet-0fake00000000000b",
  "subnet-0fake00000000000c"
] as const

/** The fake cloud's own launch template. */
export const FAKE_LAUNCH_TEMPLATE = "lt-0123456789abcdef0"

export interface PoolInstance {
  readonly subnet: string
  /** The pool label and its value, a tag on the instance (and so a label on its Node). */
  readonly pool: readonly [label: string, pool: string]
  readonly instanceType?: _InstanceType
  readonly launchTemplateId?: string
}

/** Launches one instance through EC2 RunInstances, as a node group would; returns its Node's name. */
export const runPoolInstance = async (
  ec2: InstanceType<typeof Ec2Sdk.EC2Client>,
  {
    subnet,
    pool: [label, pool],
    instanceType = "m5.large",
    launchTemplateId = FAKE_LAUNCH_TEMPLATE
  }: PoolInstance
): Promise<string> => {
  const out = await ec2.send(
    new Ec2Sdk.RunInstancesCommand({
      MinCount: 1,
      MaxCount: 1,
      LaunchTemplate: { LaunchTemplateId: launchTemplateId, Version: "1" },
      InstanceType: instanceType,
      SubnetId: subnet,
      TagSpecifications: [{ ResourceType: "instance", Tags: [{ Key: label, Value: pool }] }]
    })
  )
  const name = out.Instances?.[0]?.PrivateDnsName
  if (name === undefined) throw new Error(`RunInstances in ${subnet} returned no instance`)
  return name
}

/**
 * What the controller's config file would say for a test on the fake cloud at `cloudUrl`: `fields` (selector,
 * policies, pool settings, ...) over the shared timings; `endpoints` adds to EC2 and ARC (e.g. `autoScaling`);
 * `awsFields` over the `aws` section's timings (the Karpenter bench's slower ones).
 */
export const awsTestConfig = (
  namespace: string,
  cloudUrl: string,
  fields: Record<string, unknown>,
  endpoints: Record<string, string> = {},
  awsFields: Record<string, unknown> = {}
): ControllerConfig => {
  const r = decodeConfig({
    cloudProvider: "aws",
    namespace,
    drain: {
      deadlineSeconds: 30,
      onDeadline: "force",
      evictionBackoffInitialMs: 200,
      evictionBackoffMaxMs: 1000
    },
    zonalShift: { refreshSeconds: 1, scope: "cluster", onUnknown: "standDown" },
    breaker: { requeueSeconds: 2 },
    leaderElection: { enabled: false },
    replacement: { timeoutSeconds: 90 },
    resyncSeconds: 30,
    ...fields,
    aws: {
      region: REGION,
      clusterArn: CLUSTER_ARN,
      endpoints: { ec2: cloudUrl, arcZonalShift: cloudUrl, ...endpoints },
      zonalShift: { enabled: true, cacheSeconds: 1 },
      terminationWaitSeconds: 20,
      requestTimeoutSeconds: 5,
      ...awsFields
    }
  })
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

export type ControllerFiber = Fiber.Fiber<unknown, unknown>

/**
 * Starts the controller as main.ts composes it for `cloudProvider: aws`; `name` tells its client apart.
 * `logCapture`: the pre-termination capture (main.ts: diagnostics/logCaptureLayer.ts); default none.
 */
export const startAwsController = async (
  config: ControllerConfig,
  name: string,
  logCapture: Layer.Layer<LogCaptureHook, unknown, Kube> = noLogCaptureLayer
): Promise<ControllerFiber> => {
  const awsConfig = await Effect.runPromise(decodeAwsConfig({ ...config.aws, poolLabel: config.poolLabel }))
  const kube = makeKube(loadKubeAccess(kubeconfigPath()).access, `${name}-${process.pid}`)
  return Effect.runFork(
    startController(config, kube).pipe(
      Effect.andThen(Effect.never),
      Effect.provide(
        Layer.mergeAll(AwsCloudProvider.layer(awsConfig), logCapture).pipe(
          Layer.provide(Layer.succeed(Kube, Kube.of(kube)))
        )
      ),
      Effect.scoped
    )
  )
}

export const stopController = async (controller: ControllerFiber | undefined): Promise<void> => {
  if (controller) await Effect.runPromise(Fiber.interrupt(controller))
}
