// Every kind of config mistake (#14) is rejected and named: unknown keys at every level and in every section,
// numbers in the wrong unit or out of range, kubelet-owned condition types, and rules across fields.
import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import { decodeConfig } from "../../src/config/ConfigFile.ts"
import { closestKey, formatPath } from "../../src/config/configIssues.ts"

const ARN = "arn:aws:eks:us-west-2:111122223333:cluster/prod"

/** [what, config, first field named, text the message must contain] */
type Case = readonly [string, unknown, string, string]

const rejected = (cases: ReadonlyArray<Case>) =>
  it.each(cases)("%s", (_what, raw, field, text) => {
    const r = decodeConfig(raw, "c.yaml")
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) {
      expect(r.failure.field).toBe(field)
      expect(r.failure.message).toContain(`${field}: `)
      expect(r.failure.message).toContain(text)
    }
  })

describe("unknown keys, at every level of every section", () => {
  rejected([
    ["top level", { maxUnhealthyPercnt: 10 }, "maxUnhealthyPercnt", "did you mean maxUnhealthyPercent?"],
    [
      "top level, no close key",
      { frobnicate: true },
      "frobnicate",
      "unknown key (known keys: cloudProvider,"
    ],
    [
      "pools.<pool>",
      { pools: { gpu: { doNotRepiar: true } } },
      "pools.gpu.doNotRepiar",
      "did you mean doNotRepair?"
    ],
    [
      "a pool name that needs quoting",
      { pools: { "gpu.h100": { max: 1 } } },
      'pools["gpu.h100"].max',
      "unknown key"
    ],
    [
      "policies[i]",
      { policies: [{ conditionType: "Ready", status: "False", tolerationSecond: 5 }] },
      "policies[0].tolerationSecond",
      "did you mean tolerationSeconds?"
    ],
    [
      "reasons.<reason>",
      { reasons: { SoftLockup: { acton: "None" } } },
      "reasons.SoftLockup.acton",
      "did you mean action?"
    ],
    [
      "drain, the unit in the name",
      { drain: { deadlineMs: 5 } },
      "drain.deadlineMs",
      "did you mean deadlineSeconds?"
    ],
    [
      "zonalShift",
      { zonalShift: { onunknown: "proceed" } },
      "zonalShift.onunknown",
      "did you mean onUnknown?"
    ],
    ["breaker", { breaker: { requeue: 5 } }, "breaker.requeue", "did you mean requeueSeconds?"],
    ["reboot", { reboot: { settleSecond: 5 } }, "reboot.settleSecond", "did you mean settleSeconds?"],
    ["replacement", { replacement: { timeout: 5 } }, "replacement.timeout", "did you mean timeoutSeconds?"],
    [
      "logCapture",
      { logCapture: { destinaton: "https://b/x" } },
      "logCapture.destinaton",
      "did you mean destination?"
    ],
    [
      "leaderElection",
      { leaderElection: { leasename: "x" } },
      "leaderElection.leasename",
      "did you mean leaseName?"
    ],
    ["server", { server: { prot: 1 } }, "server.prot", "did you mean port?"],
    [
      "kwok",
      { kwok: { replacementDelay: 1 } },
      "kwok.replacementDelay",
      "did you mean replacementDelaySeconds?"
    ],
    ["aws", { aws: { regoin: "us-west-2" } }, "aws.regoin", "did you mean region?"],
    [
      "aws.subnets[i] (the #14 example)",
      {
        aws: {
          region: "us-west-2",
          subnets: [{ subnetId: "subnet-0a1", zone: "us-west-2a", zoneid: "usw2-az1" }]
        }
      },
      "aws.subnets[0].zoneid",
      "unknown key (did you mean zoneId?)"
    ],
    ["aws.subnets misspelt", { aws: { subnet: [] } }, "aws.subnet", "did you mean subnets?"],
    // One pool label for the breaker and the cloud: the top-level poolLabel (#14).
    ["aws.poolLabel (removed)", { aws: { poolLabel: "nodemend.io/pool" } }, "aws.poolLabel", "unknown key"],
    [
      "aws.zonalShift (a key with a default)",
      { aws: { zonalShift: { cacheSecond: 3 } } },
      "aws.zonalShift.cacheSecond",
      "did you mean cacheSeconds?"
    ],
    [
      "aws.endpoints",
      { aws: { endpoints: { arczonalshift: "http://a" } } },
      "aws.endpoints.arczonalshift",
      "did you mean arcZonalShift?"
    ],
    [
      "aws section while the kwok provider runs",
      { cloudProvider: "kwok", aws: { terminationMod: "ec2" } },
      "aws.terminationMod",
      "did you mean terminationMode?"
    ]
  ])
})

describe("numbers in the wrong unit or out of range", () => {
  rejected([
    [
      "ms field given a fraction",
      { drain: { evictionBackoffInitialMs: 1.5 } },
      "drain.evictionBackoffInitialMs",
      "integer"
    ],
    [
      "ms backoff of 0",
      { drain: { evictionBackoffInitialMs: 0 } },
      "drain.evictionBackoffInitialMs",
      "greater than or equal to 1"
    ],
    [
      "ms max below initial",
      { drain: { evictionBackoffInitialMs: 5000, evictionBackoffMaxMs: 2000 } },
      "drain.evictionBackoffMaxMs",
      "at least drain.evictionBackoffInitialMs (5000)"
    ],
    [
      "ms max below the default initial",
      { drain: { evictionBackoffMaxMs: 500 } },
      "drain.evictionBackoffMaxMs",
      "(1000)"
    ],
    [
      "negative seconds",
      { drain: { deadlineSeconds: -1 } },
      "drain.deadlineSeconds",
      "greater than or equal to 0"
    ],
    [
      "NaN seconds (YAML .nan)",
      { policies: [{ conditionType: "Ready", status: "False", tolerationSeconds: Number.NaN }] },
      "policies[0].tolerationSeconds",
      "finite"
    ],
    [
      "infinite seconds (YAML .inf)",
      { reboot: { settleSeconds: Number.POSITIVE_INFINITY } },
      "reboot.settleSeconds",
      "finite"
    ],
    [
      "seconds as a string",
      { reasons: { SoftLockup: { drainDeadlineSeconds: "10m" } } },
      "reasons.SoftLockup.drainDeadlineSeconds",
      "Expected number"
    ],
    ["a period of 0", { resyncSeconds: 0 }, "resyncSeconds", "greater than 0"],
    ["a refresh of 0", { zonalShift: { refreshSeconds: 0 } }, "zonalShift.refreshSeconds", "greater than 0"],
    ["a requeue of 0", { breaker: { requeueSeconds: 0 } }, "breaker.requeueSeconds", "greater than 0"],
    [
      "a timeout of 0",
      { replacement: { timeoutSeconds: 0 } },
      "replacement.timeoutSeconds",
      "greater than 0"
    ],
    [
      "renew no faster than the lease",
      { leaderElection: { leaseDurationSeconds: 10, renewIntervalSeconds: 10 } },
      "leaderElection.renewIntervalSeconds",
      "less than leaderElection.leaseDurationSeconds (10)"
    ],
    [
      "lease shorter than the default renewal",
      { leaderElection: { leaseDurationSeconds: 1 } },
      "leaderElection.renewIntervalSeconds",
      "(1)"
    ],
    ["fractional count", { drain: { maxConcurrent: 2.5 } }, "drain.maxConcurrent", "integer"],
    ["zero count", { drain: { maxConcurrent: 0 } }, "drain.maxConcurrent", "greater than or equal to 1"],
    ["port out of range", { server: { port: 70000 } }, "server.port", "between 0 and 65535"],
    ["negative percent", { maxUnhealthyPercent: -5 }, "maxUnhealthyPercent", "between 0 and 100"],
    [
      "pool percent over 100",
      { pools: { gpu: { maxUnhealthyPercent: 120 } } },
      "pools.gpu.maxUnhealthyPercent",
      "between 0 and 100"
    ],
    ["aws ms fraction", { aws: { terminateBatchWindowMs: 0.5 } }, "aws.terminateBatchWindowMs", "integer"],
    [
      "aws ms over its cap",
      { aws: { terminateBatchWindowMs: 20_000 } },
      "aws.terminateBatchWindowMs",
      "less than or equal to 10000"
    ],
    [
      "aws negative seconds",
      { aws: { terminationWaitSeconds: -1 } },
      "aws.terminationWaitSeconds",
      "greater than or equal to 0"
    ],
    [
      "aws timeout of 0",
      { aws: { requestTimeoutSeconds: 0 } },
      "aws.requestTimeoutSeconds",
      "greater than 0"
    ],
    [
      "aws bad value",
      { aws: { region: "Oregon", clusterArn: ARN } },
      "aws.region",
      "Expected a string matching"
    ]
  ])
})

describe("kubelet-owned condition types and other policy mistakes", () => {
  rejected([
    [
      "DiskPressure",
      { policies: [{ conditionType: "DiskPressure", status: "False" }] },
      "policies[0].conditionType",
      "DiskPressure is a kubelet-owned condition and is never repaired"
    ],
    [
      "MemoryPressure, not first",
      {
        policies: [
          { conditionType: "Ready", status: "False" },
          { conditionType: "MemoryPressure", status: "Unknown", action: "None" }
        ]
      },
      "policies[1].conditionType",
      "MemoryPressure is a kubelet-owned condition"
    ],
    [
      "PIDPressure, even to disable it",
      { policies: [{ conditionType: "PIDPressure", status: "False", enabled: false }] },
      "policies[0].conditionType",
      "PIDPressure is a kubelet-owned condition"
    ],
    [
      "the same policy twice",
      {
        policies: [
          { conditionType: "Ready", status: "False" },
          { conditionType: "KernelReady", status: "False" },
          { conditionType: "Ready", status: "False", tolerationSeconds: 1 }
        ]
      },
      "policies[2]",
      "duplicate of policies[0] (Ready/False)"
    ],
    [
      "a placeholder that is no catalog template",
      { reasons: { "NvidiaXID{code}Eror": { action: "Replace" } } },
      "reasons.NvidiaXID{code}Eror",
      "not a catalog reason template"
    ]
  ])
})

describe("every problem is reported, not only the first", () => {
  it("names each field once, in one message", () => {
    const r = decodeConfig(
      {
        drain: { evictionBackoffInitialMs: 1.5 },
        polices: [],
        aws: { subnets: [{ subnetId: "subnet-1", zone: "a", zoneid: "b" }] }
      },
      "c.yaml"
    )
    expect(Result.isFailure(r) && r.failure.message).toMatch(/^invalid config c\.yaml: /u)
    const message = Result.isFailure(r) ? r.failure.message : ""
    for (const field of ["drain.evictionBackoffInitialMs: ", "polices: ", "aws.subnets[0].zoneid: "])
      expect(message).toContain(field)
  })
})

describe("what is still accepted", () => {
  it.each([
    [
      "any exact reason, catalog or not",
      { reasons: { KubeletNotReady: { action: "None" }, NvidiaXID79Error: {} } }
    ],
    [
      "catalog templates",
      { reasons: { "NvidiaXID{code}Error": { action: "Replace" }, "DCGMHealthCode{code}": {} } }
    ],
    [
      "a toleration of 0 and fractional seconds",
      {
        policies: [{ conditionType: "Ready", status: "False", tolerationSeconds: 0 }],
        reboot: { settleSeconds: 0.5 }
      }
    ],
    ["port 0 (any free port)", { server: { port: 0 } }],
    ["an aws section without region (the placeholder)", { cloudProvider: "aws", aws: {} }],
    [
      "a complete aws section",
      {
        cloudProvider: "aws",
        aws: {
          region: "us-west-2",
          clusterArn: ARN,
          terminateBatchWindowMs: 0,
          subnets: [{ subnetId: "subnet-0a1", zone: "us-west-2a", zoneId: "usw2-az1" }]
        }
      }
    ]
  ])("%s", (_what, raw) => {
    const r = decodeConfig(raw)
    expect(Result.isFailure(r) ? r.failure.message : "ok").toBe("ok")
  })

  it("keeps the aws section as written: the provider applies its own defaults when it starts", () => {
    const aws = { region: "us-west-2", clusterArn: ARN }
    expect(Result.getOrThrow(decodeConfig({ aws })).aws).toEqual(aws)
  })
})

describe("field paths and suggestions", () => {
  it("formats paths as they are written in YAML", () => {
    expect(formatPath(["aws", "subnets", 0, "zoneId"])).toBe("aws.subnets[0].zoneId")
    expect(formatPath(["pools", "gpu.h100", "doNotRepair"])).toBe('pools["gpu.h100"].doNotRepair')
    expect(formatPath([])).toBe("")
  })
  it("suggests by case, by unit suffix and by a small typo, and nothing for an unrelated key", () => {
    const known = ["zoneId", "deadlineSeconds", "maxUnhealthyPercent", "policies"]
    expect(closestKey("zoneid", known)).toBe("zoneId")
    expect(closestKey("deadlineMs", known)).toBe("deadlineSeconds")
    expect(closestKey("maxUnhealthyPrecent", known)).toBe("maxUnhealthyPercent")
    expect(closestKey("polices", known)).toBe("policies")
    expect(closestKey("color", known)).toBeUndefined()
  })
})
