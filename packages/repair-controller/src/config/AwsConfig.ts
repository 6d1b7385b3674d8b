/**
 * The `aws:` section of the controller config (used when `cloudProvider: aws`).
 *
 *   aws:
 *     region: us-west-2
 *     clusterArn: arn:aws:eks:us-west-2:111122223333:cluster/prod   # needed for zonal shift
 *     endpoints: { ec2: http://127.0.0.1:4566, arcZonalShift: ..., autoScaling: ..., s3: ... }  # tests / fakes
 *     zonalShift: { enabled: true, cacheSeconds: 30 }
 *     maxAttempts: 5
 *     requestTimeoutSeconds: 10
 *     terminationWaitSeconds: 60
 *     terminateBatchWindowMs: 100
 *     subnets: [{ subnetId: subnet-0a..., zone: us-west-2a, zoneId: usw2-az1 }]
 *     zoneIds: { usw2-az1: us-west-2a }
 */
import { Effect, Schema } from "effect"
import { Millis, PositiveSeconds, Seconds } from "./units.ts"

export const TERMINATION_MODE_REMOVED =
  "removed: Auto Scaling group membership is read from each instance's aws:autoscaling:groupName tag, and a member is always replaced through its group (never RunInstances); delete the key"

/** A field that may be absent (or undefined) in the file and has `value` then. */
const withDefault =
  <S extends Schema.Top>(value: S["Encoded"]) =>
  (schema: S) =>
    schema.pipe(Schema.withDecodingDefault(Effect.succeed(value)))

const Url = Schema.String.check(Schema.isPattern(/^https?:\/\/[^\s/]+(?:\/\S*)?$/u))
const Region = Schema.String.check(Schema.isPattern(/^[a-z]{2}(?:-[a-z]+)+-\d+$/u))

export const AwsSubnet = Schema.Struct({
  subnetId: Schema.String.check(Schema.isPattern(/^subnet-[0-9a-z]+$/u)),
  zone: Schema.String,
  zoneId: Schema.optionalKey(Schema.String)
})
export type AwsSubnet = typeof AwsSubnet.Type

/** Every key of the section but `region`: what the config file checks whatever the cloud provider is. */
const sectionFields = {
  /** EKS cluster ARN: the ARC managed resource whose zonal shifts stop repairs. */
  clusterArn: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^arn:aws[a-z-]*:eks:[a-z0-9-]+:\d{12}:cluster\/.+$/u))
  ),
  /** Endpoint overrides (fake cloud, moto, VPC endpoints). Absent: the public AWS endpoints. */
  endpoints: Schema.Struct({
    ec2: Schema.optionalKey(Url),
    autoScaling: Schema.optionalKey(Url),
    arcZonalShift: Schema.optionalKey(Url),
    /** Where `logCapture.destination: s3://…` bundles go (path-style then): the fake cloud, a VPC endpoint. */
    s3: Schema.optionalKey(Url)
  }).pipe(withDefault({})),
  /**
   * Removed (#16): whether an instance is in an Auto Scaling group is read from its EC2 tags, and a member is always
   * terminated and replaced through its group. Still a known key, so a config that sets it is told so.
   */
  terminationMode: Schema.optionalKey(
    Schema.Unknown.check(Schema.makeFilter(() => TERMINATION_MODE_REMOVED))
  ),
  zonalShift: Schema.Struct({
    enabled: Schema.Boolean.pipe(withDefault(true)),
    cacheSeconds: Seconds.pipe(withDefault(30))
  }).pipe(withDefault({})),
  /** Tries per AWS call, first included (SDK standard retry mode: backoff, throttling quota). */
  maxAttempts: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 20 })).pipe(withDefault(5)),
  requestTimeoutSeconds: PositiveSeconds.pipe(withDefault(10)),
  /** How long `terminate` waits for `terminated` (polling with backoff); 0 = return once started. */
  terminationWaitSeconds: Seconds.pipe(withDefault(60)),
  /** Terminations arriving within this window share one TerminateInstances call (at most 500 ids). */
  terminateBatchWindowMs: Millis.check(Schema.isLessThanOrEqualTo(10_000)).pipe(withDefault(100)),
  /** Subnets a replacement may use when its own zone is shifted away. */
  subnets: Schema.Array(AwsSubnet).pipe(withDefault([])),
  /** Zone id -> zone name, for ARC shifts of zones no node has shown us yet. */
  zoneIds: Schema.Record(Schema.String, Schema.String).pipe(withDefault({}))
}

export const AwsConfig = Schema.Struct({
  region: Region,
  ...sectionFields,
  /**
   * The instance tag naming a node's pool (read before a repair, written on replacements). Not an `aws:` key:
   * program.ts fills it from the top-level `poolLabel`, so the breaker and the cloud name pools one way.
   */
  poolLabel: Schema.String.pipe(withDefault("nodemend.io/pool"))
})
export type AwsConfig = typeof AwsConfig.Type
export type AwsConfigInput = typeof AwsConfig.Encoded

/**
 * The `aws:` section as the config file checks it (ConfigFileSchema.ts): every key known and well typed, so a
 * typo fails at start whatever `cloudProvider` is. `region` may be left out: the provider then takes the
 * environment's (`AWS_REGION`, which EKS Pod Identity and IRSA set), and a start without either fails. Without
 * `clusterArn` the provider cannot ask ARC about zonal shifts, so every repair stands down (fail closed).
 */
export const AwsConfigSection = Schema.Struct({ region: Schema.optionalKey(Region), ...sectionFields })

/** Unknown keys are errors here too: the provider never runs on a section it would partly ignore. */
export const decodeAwsConfig = (input: unknown) =>
  Schema.decodeUnknownEffect(AwsConfig)(input, { onExcessProperty: "error", errors: "all" })

/** The region the section names, else the environment's (`AWS_REGION`, then `AWS_DEFAULT_REGION`). */
export const withEnvironmentRegion = (
  section: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>> = process.env
): Readonly<Record<string, unknown>> => {
  const region = section.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined)
  return region === undefined ? section : { ...section, region }
}
