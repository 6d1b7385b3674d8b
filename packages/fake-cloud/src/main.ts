#!/usr/bin/env node
/**
 * nodemend-fake-cloud: `serve` runs the fake (EC2 Query + ARC REST-JSON + admin API on loopback);
 * the other commands drive a running fake through its admin API (`--endpoint` or NODEMEND_FAKE_CLOUD_URL).
 */
import { readFileSync, writeFileSync } from "node:fs"
import { parseArgs } from "node:util"
import { kubeAccessFromKubeconfig, makeKubeHttp } from "@nodemend/kube-access"
import { Schema } from "effect"
import { AdminClient } from "./admin/AdminClient.ts"
import { AutoScalingGroupRequest, toGroupSpec } from "./admin/AutoScalingAdmin.ts"
import type { FaultSpec } from "./Faults.ts"
import { startFakeCloud } from "./FakeCloudServer.ts"
import { kwokNodeMirror } from "./KwokNodeMirror.ts"

const USAGE = `usage: nodemend-fake-cloud <command> [options]

  serve [--host 127.0.0.1] [--port 0] [--region us-west-2] [--kubeconfig PATH]
        [--boot-delay-ms 2000] [--terminate-delay-ms 1000] [--reboot-delay-ms 1000]
        [--cluster-arn ARN] [--url-file PATH] [--autoscaling-groups FILE.json]
      Without --kubeconfig instances live only in memory; with it each instance is a kwok Node.
      --autoscaling-groups: a JSON array of groups to create at start (the admin API's group requests).

  shift start --zone ZONE|ZONE_ID [--minutes 60] [--resource ARN] [--comment TEXT] [--practice-run]
  shift cancel ID | --all
  autoshift start --zone ZONE|ZONE_ID
  autoshift end --zone ZONE|ZONE_ID
  fault throttle|error|slow [--target ec2|arc|autoScaling|any] [--action NAME] [--count N] [--status 5xx] [--delay-ms N]
  fault clear
  adopt NODE_NAME [--instance-type TYPE] [--zone ZONE] [--instance-id ID]
  asg create NAME --launch-template LT_ID --min N --max N --desired N [--zone Z1,Z2] [--instance-type TYPE]
             [--tag KEY=VALUE]...
  asg list
  template break LT_ID --condition TYPE --reason REASON [--status False] [--message TEXT]
      Instances launched from LT_ID from now on come up Ready, then report that Node condition (a broken template).
  template break LT_ID --missing-gpus N
      Instances launched from LT_ID from now on come up with N GPUs fewer than their type has.
  template mend LT_ID
  asg launch-failure NAME --message TEXT | --clear
  instances | stats | zonal-shifts
      Admin commands take --endpoint URL (default: $NODEMEND_FAKE_CLOUD_URL).`

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    region: { type: "string", default: "us-west-2" },
    kubeconfig: { type: "string" },
    "boot-delay-ms": { type: "string", default: "2000" },
    "terminate-delay-ms": { type: "string", default: "1000" },
    "reboot-delay-ms": { type: "string", default: "1000" },
    "cluster-arn": { type: "string" },
    "url-file": { type: "string" },
    "autoscaling-groups": { type: "string" },
    "launch-template": { type: "string" },
    min: { type: "string" },
    max: { type: "string" },
    desired: { type: "string" },
    tag: { type: "string", multiple: true },
    message: { type: "string" },
    clear: { type: "boolean" },
    endpoint: { type: "string" },
    zone: { type: "string" },
    minutes: { type: "string" },
    resource: { type: "string" },
    comment: { type: "string" },
    "practice-run": { type: "boolean" },
    all: { type: "boolean" },
    target: { type: "string" },
    action: { type: "string" },
    count: { type: "string" },
    status: { type: "string" },
    "delay-ms": { type: "string" },
    "instance-type": { type: "string" },
    "instance-id": { type: "string" },
    condition: { type: "string" },
    "missing-gpus": { type: "string" },
    reason: { type: "string" },
    help: { type: "boolean", short: "h" }
  }
})

function fail(message: string): never {
  process.stderr.write(`nodemend-fake-cloud: ${message}\n`)
  process.exit(2)
}

function int(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0)
    fail(`--${name} must be a non-negative integer, got ${JSON.stringify(raw)}`)
  return n
}

function admin(): AdminClient {
  const endpoint = flags.endpoint ?? process.env.NODEMEND_FAKE_CLOUD_URL
  if (!endpoint) fail("no endpoint: pass --endpoint URL or set NODEMEND_FAKE_CLOUD_URL")
  return new AdminClient(endpoint)
}

const print = (v: unknown): void => {
  process.stdout.write(`${JSON.stringify(v, null, 2)}\n`)
}
const needZone = () => flags.zone ?? fail("--zone is required")

function groupsFile(path: string) {
  try {
    const raw: unknown = JSON.parse(readFileSync(path, "utf8"))
    return Schema.decodeUnknownSync(Schema.Array(AutoScalingGroupRequest))(raw).map(toGroupSpec)
  } catch (e) {
    return fail(`--autoscaling-groups ${path}: ${e instanceof Error ? e.message : String(e)}`)
  }
}

async function asg(sub: string | undefined, name: string | undefined): Promise<void> {
  if (sub === "list") return print(await admin().autoScalingGroups())
  if (!name) return fail("asg create|launch-failure needs a group NAME")
  if (sub === "launch-failure") {
    if (!flags.clear && flags.message === undefined)
      return fail("asg launch-failure needs --message TEXT or --clear")
    return print(await admin().setLaunchFailure(name, flags.clear ? undefined : flags.message))
  }
  if (sub !== "create") return fail("asg create|list|launch-failure")
  const size = (flag: "min" | "max" | "desired") => int(flag, flags[flag]) ?? fail(`--${flag} is required`)
  const tags = Object.fromEntries(
    (flags.tag ?? []).map((t) => {
      const eq = t.indexOf("=")
      return eq > 0 ? [t.slice(0, eq), t.slice(eq + 1)] : fail(`--tag ${t}: expected KEY=VALUE`)
    })
  )
  return print(
    await admin().createAutoScalingGroup({
      name,
      launchTemplateId: flags["launch-template"] ?? fail("--launch-template is required"),
      minSize: size("min"),
      maxSize: size("max"),
      desiredCapacity: size("desired"),
      ...(flags.zone ? { zones: flags.zone.split(",") } : {}),
      ...(flags["instance-type"] ? { instanceType: flags["instance-type"] } : {}),
      ...(Object.keys(tags).length > 0 ? { tags } : {})
    })
  )
}

async function main(): Promise<void> {
  const [command, sub, arg] = positionals
  if (flags.help || !command) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  switch (command) {
    case "serve": {
      const log = (m: string) => process.stderr.write(`${new Date().toISOString()} ${m}\n`)
      let mirror: ReturnType<typeof kwokNodeMirror> | undefined
      if (flags.kubeconfig) {
        const kube = makeKubeHttp(kubeAccessFromKubeconfig(flags.kubeconfig), {
          userAgent: "nodemend-fake-cloud"
        })
        mirror = kwokNodeMirror(kube, flags.region, {
          rebootDelayMs: int("reboot-delay-ms", flags["reboot-delay-ms"]) ?? 1000
        })
      }
      const cloud = await startFakeCloud({
        host: flags.host,
        port: int("port", flags.port) ?? 0,
        region: flags.region,
        bootDelayMs: int("boot-delay-ms", flags["boot-delay-ms"]) ?? 2000,
        terminateDelayMs: int("terminate-delay-ms", flags["terminate-delay-ms"]) ?? 1000,
        ...(flags["cluster-arn"] ? { clusterArn: flags["cluster-arn"] } : {}),
        ...(mirror ? { mirror } : {}),
        ...(flags["autoscaling-groups"]
          ? { autoScalingGroups: groupsFile(flags["autoscaling-groups"]) }
          : {}),
        log
      })
      if (flags["url-file"]) writeFileSync(flags["url-file"], `${cloud.url}\n`)
      process.stdout.write(
        `nodemend-fake-cloud listening on ${cloud.url} (${mirror ? "kwok Nodes" : "in memory"})\n`
      )
      const stop = () => void cloud.close().then(() => process.exit(0))
      process.once("SIGINT", stop)
      process.once("SIGTERM", stop)
      return
    }
    case "shift":
      if (sub === "start") {
        return print(
          await admin().startZonalShift({
            awayFrom: needZone(),
            ...(flags.minutes ? { expiresInMinutes: Number(flags.minutes) } : {}),
            ...(flags.resource ? { resourceIdentifier: flags.resource } : {}),
            ...(flags.comment ? { comment: flags.comment } : {}),
            ...(flags["practice-run"] ? { practiceRun: true } : {})
          })
        )
      }
      if (sub === "cancel") {
        if (flags.all) return print(await admin().cancelAllZonalShifts())
        return print(await admin().cancelZonalShift(arg ?? fail("shift cancel needs an ID or --all")))
      }
      return fail("shift start|cancel")
    case "autoshift":
      if (sub === "start") return print(await admin().startAutoshift(needZone()))
      if (sub === "end") return print(await admin().endAutoshift(needZone()))
      return fail("autoshift start|end")
    case "fault": {
      if (sub === "clear") return print(await admin().clearFaults())
      if (sub !== "throttle" && sub !== "error" && sub !== "slow")
        return fail("fault throttle|error|slow|clear")
      const target = flags.target as FaultSpec["target"] | undefined
      if (target !== undefined && !["ec2", "arc", "autoScaling", "any"].includes(target)) {
        return fail("--target must be ec2, arc, autoScaling or any")
      }
      const count = int("count", flags.count)
      const status = int("status", flags.status)
      const delayMs = int("delay-ms", flags["delay-ms"])
      return print(
        await admin().injectFault({
          kind: sub,
          ...(target ? { target } : {}),
          ...(flags.action ? { action: flags.action } : {}),
          ...(count !== undefined ? { count } : {}),
          ...(status !== undefined ? { status } : {}),
          ...(delayMs !== undefined ? { delayMs } : {})
        })
      )
    }
    case "adopt":
      return print(
        await admin().adopt({
          nodeName: sub ?? fail("adopt needs a NODE_NAME"),
          ...(flags["instance-type"] ? { instanceType: flags["instance-type"] } : {}),
          ...(flags.zone ? { zone: flags.zone } : {}),
          ...(flags["instance-id"] ? { instanceId: flags["instance-id"] } : {})
        })
      )
    case "asg":
      return asg(sub, arg)
    case "template": {
      const id = arg ?? fail("template break|mend LT_ID")
      if (sub === "mend") return print(await admin().mendLaunchTemplate(id))
      if (sub !== "break") return fail("template break|mend LT_ID")
      const missing = flags["missing-gpus"]
      if (missing !== undefined)
        return print(await admin().breakLaunchTemplate(id, { missingGpus: Number(missing) }))
      return print(
        await admin().breakLaunchTemplate(id, {
          type: flags.condition ?? fail("template break needs --condition TYPE"),
          status: flags.status ?? "False",
          reason: flags.reason ?? fail("template break needs --reason REASON"),
          message: flags.message ?? `launched from broken launch template ${id} (fake cloud)`
        })
      )
    }
    case "instances":
      return print(await admin().instances())
    case "stats":
      return print(await admin().stats())
    case "zonal-shifts":
      return print(
        await (
          await fetch(
            `${(flags.endpoint ?? process.env.NODEMEND_FAKE_CLOUD_URL ?? "").replace(/\/+$/, "")}/admin/zonal-shifts`
          )
        ).json()
      )
    default:
      fail(`unknown command ${JSON.stringify(command)}\n${USAGE}`)
  }
}

main().catch((e: unknown) => fail(e instanceof Error ? e.message : String(e)))
