/**
 * The repair controller's config for the demo: `cloudProvider: aws` against the fake cloud, short
 * tolerations (said on screen), zonal shifts judged per zone. Pure, so the controller's tests can decode it
 * (packages/repair-controller/test/config/shippedConfigs.test.ts).
 */
export const REGION = "us-west-2"
export const CLUSTER_ARN = "arn:aws:eks:us-west-2:111122223333:cluster/nodemend-demo"

/** Short tolerations, so a repair is seen in seconds (the defaults are 10 and 30 minutes). */
export const TOLERATIONS = {
  AcceleratedHardwareReady: 15,
  KernelReady: 10,
  NetworkingReady: 10,
  ContainerRuntimeReady: 10,
  StorageReady: 10
}

/**
 * Per pool: the breaker's limit and the in-flight budget. `general` lets 4 of its 10 nodes through the breaker
 * (40%) but repairs at most 2 at once: 4 failing together -> 2 repaired, 2 queued (RepairQueued) until one of
 * the first ends. `gpu` keeps the defaults (breaker 20%, maxInFlight "10%": 1 of 8 at a time).
 */
export const POOL_SETTINGS = {
  general: { maxUnhealthyPercent: 40, maxInFlight: "2" },
  gpu: { maxUnhealthyPercent: 20, maxInFlight: "10%" }
}

/** `pools`: full pool name (the scenario prefixes them) -> settings; default: the unprefixed names. */
export const controllerConfigYaml = ({
  namespace,
  nodeSelector,
  leaseName,
  metricsPort,
  cloudUrl,
  pools = POOL_SETTINGS
}) =>
  [
    "cloudProvider: aws",
    `namespace: ${namespace}`,
    `nodeSelector: ${nodeSelector}`,
    "pools:",
    ...Object.entries(pools).map(
      ([name, p]) =>
        `  ${name}: { maxUnhealthyPercent: ${p.maxUnhealthyPercent}, maxInFlight: "${p.maxInFlight}" }`
    ),
    "policies:",
    ...Object.entries(TOLERATIONS).map(
      ([t, s]) => `  - { conditionType: ${t}, status: "False", tolerationSeconds: ${s} }`
    ),
    // Story 1 shows a replacement: XID 79 keeps 1.x's Replace here (docs/reason-codes.md, "To keep 1.x's actions").
    // reason-codes 2.0.0's default for it is Reboot, then Replace if it comes back within escalation.windowSeconds.
    "reasons:",
    "  NvidiaXID79Error: { action: Replace }",
    "drain: { deadlineSeconds: 20, onDeadline: force, evictionBackoffInitialMs: 500, evictionBackoffMaxMs: 2000 }",
    "zonalShift: { scope: zone, refreshSeconds: 2 }",
    "breaker: { requeueSeconds: 5 }",
    // The scenario fails up to 4 of zone a's 8 nodes at once on purpose (the breaker story's two, the XID 79 and
    // the DBE nodes): the default 20% would stand zone a down mid-story (seen in CI: the DBE node never repaired).
    "zoneBreaker: { maxUnhealthyPercent: 60 }",
    `leaderElection: { enabled: true, leaseName: ${leaseName} }`,
    "replacement: { timeoutSeconds: 180 }",
    // EC2 scheduled events (ADR 0018): the cloud asked every 2 s; a lead of 9 min 45 s, so an event scheduled 10 min
    // out (the scenario's retirement story, or `npm start` with the fake cloud's admin API) is due in 15 s.
    "scheduledEvents: { refreshSeconds: 2, leadSeconds: 585 }",
    `server: { port: ${metricsPort} }`,
    "aws:",
    `  region: ${REGION}`,
    `  clusterArn: ${CLUSTER_ARN}`,
    `  endpoints: { ec2: "${cloudUrl}", arcZonalShift: "${cloudUrl}" }`,
    "  terminationWaitSeconds: 60",
    ""
  ].join("\n")
