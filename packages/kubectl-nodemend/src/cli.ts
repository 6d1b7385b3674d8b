/** Argument parsing and dispatch for `kubectl nodemend`. `run` returns the exit code; main.ts only wires process I/O. */
import { parseArgs } from "node:util"
import {
  type ConfigMap,
  type CoreEvent,
  type KubeHttp,
  type List,
  NODE_EVENT_NAMESPACE,
  NODES_PATH,
  type Node,
  namespacedPath,
  nodePath
} from "@nodemend/kube-access"
import { LOG_CATEGORIES, LogCategory } from "@nodemend/kube-access/NodeDiagnostic"
import { Effect, Schema } from "effect"
import { parseDurationMs } from "./duration.ts"
import { k8sCode, k8sMessage, PluginError } from "./errors.ts"
import { recordCommand } from "./record.ts"
import { historyJsonSchema } from "@nodemend/repair-controller/whatif"
import { whatifCommand } from "./whatif.ts"
import {
  DEFAULT_POOL_LABELS,
  HELD_POOL_HEADERS,
  heldPoolRows,
  heldPools,
  NODE_HEADERS,
  nodeRows,
  poolStates,
  REPAIR_CONTROLLER,
  TIMELINE_LEGEND,
  timeline
} from "./fleet.ts"
import { REPAIR_JOURNAL_LABEL } from "@nodemend/reason-codes"
import { connect } from "./kubeClient.ts"
import { logsCommand } from "./logs.ts"
import { repairLogsCommand } from "./repairLogs.ts"
import { namespaceFlag, type RepairCommand, runRepairAction } from "./repairActions.ts"
import { HOLD_HEADERS, holdRows, holdsOf, runRelease } from "./relapseHolds.ts"
import { RELAPSE_LEDGER_LABEL } from "@nodemend/repair-controller"
import { parseS3Uri, presignBundleUrls } from "./s3Presign.ts"
import { DEFAULT_CONTROLLER_NAMESPACE, journalName, journalOf, repairOf } from "./repairJournal.ts"
import { renderTable } from "./table.ts"
import { repairRequestCommand } from "./repairRequest.ts"
import { PLAN_HEADERS, PLANNED_REPAIRS_CONFIGMAP, planRows, plansOf } from "./plannedRepairs.ts"
import { terminalSafe, terminalSafeLines } from "./terminalSafe.ts"

export interface CliIO {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
}

export const USAGE = `kubectl nodemend: nodemend's kubectl plugin

Usage:
  kubectl nodemend logs <node>... | -l <selector> [-o <dir>] [--timeout 300s] [--categories All]
                        [--destination-url <PUT url>] [--download-url <GET url>] [--s3 s3://bucket/prefix --region r]
  kubectl nodemend logs --repair <node> [-o <dir>] [--region r] [--endpoint-url <S3 endpoint>]
      Collect a log bundle from each node's agent (NodeDiagnostic), download it to <dir>/<node>-logs.tar.gz and
      clean up. Without --destination-url the bundle stays on the node and is fetched through the kubelet proxy.
      URL flags may contain {node}. A destination URL must be allowed by the agents' allowlist. --s3 presigns
      PUT and GET URLs for <prefix>/<node>-logs.tar.gz with your AWS credentials.
      --repair <node>: download the bundle the repair controller captured before it terminated the node (the S3
      object its repair record or Events name) with your AWS credentials, checked against the reported digest.
  kubectl nodemend status [-l <selector>] [--pool-label <label>]...
      The fleet at a glance: conditions, repair phase, breaker / stand-down state per pool, the pools held
      by a failed repair (each counts against its pool's in-flight budget until an operator acts), the
      repairs held for relapse (pool and reason, with the evidence and the release command), and the repairs
      planned for EC2 scheduled events (event, NotBefore, when the repair starts, what holds it), from the
      controller's journal.
  kubectl nodemend timeline <node>
      What happened to a node, and why, in time order, with who wrote each entry: "verified" only for the
      repair controller's own Events (its identity is checked on write); everything else is "unverified".
      The controller's journal adds its repair record and its planned repair for a scheduled event.
  kubectl nodemend record [-o history.jsonl] [-l <selector>] [--pool-label <label>]... [--for 24h]
      Watch Nodes and write every change of the agent's conditions and Ready, with each node's pool and zone,
      as JSON lines (the what-if history format, docs/operations.md), until interrupted or --for has passed.
      Without -o: standard output (made terminal-safe; -o keeps the cluster's text exactly).
  kubectl nodemend whatif --config controller.yaml [--compare other.yaml] [-o json] [--repair-duration 15m]
                          [--limit 50] history.jsonl
      Replay a recorded history through the repair controller's own decision code on a simulated clock: per
      pool and reason, the repairs it would have started and when, what it would have held and why (breaker,
      budget, veto), and the conditions that recovered by themselves. --compare puts two policy sets side by
      side. Bad lines are named with their line number and skipped. --print-schema prints the history format's
      JSON Schema.
  kubectl nodemend retry <node>
      For a Failed repair only: delete its journal record so that the controller repairs the node afresh if it
      is still unhealthy. The node keeps its taint. Recorded as a RepairRetryRequested Event on the Node.
  kubectl nodemend abandon <node>
      For a Failed repair only: annotate the Node nodemend.io/do-not-repair=true (never repaired automatically
      again) and delete its journal record. The node keeps its taint: fix it by hand, then uncordon it.
      Recorded as a RepairAbandoned Event on the Node.
  kubectl nodemend repair <node> --reason <code> [--message <why>] [--wait] [--timeout 300s]
      Ask the repair controller to repair a node (a straggler a training job found, a node a person distrusts):
      creates a RepairRequest in the controller namespace with you as requestedBy (from a SelfSubjectReview; the
      admission policy nodemend-repair-requests refuses anyone else's name). <code> is a reason code of
      @nodemend/reason-codes (its action and knobs apply) or ManualRepairRequested (Replace). The request goes
      through every gate (veto, stand-downs, breakers, relapse hold, in-flight budget, dry-run); its status says
      what holds it and what lifts that. Prints the controller's first answer, or with --wait every change until
      the repair is done or refused (exit 1 when refused or failed). Needs ClusterRole nodemend-repair-requester
      bound in the controller namespace.
  kubectl nodemend release <pool> <reason>
      Lift a relapse hold: the controller holds new repairs of a reason in a pool when the nodes it repaired
      for it keep coming back with it (RepairHeld). Deletes the hold's ledger in the controller namespace (it
      starts over) and records a RepairHoldReleased Event; the controller repairs again within about 10 s.
      Nodes without a pool label are in the pool '<cluster>'.
      retry, abandon and release check every permission they need first (get/delete the journal ConfigMap in the
      controller namespace, get (abandon: patch) the Node, create events.k8s.io Events in default), refuse a
      repair that is in flight, and delete the record only as it was read (uid and resourceVersion).

Global flags: --kubeconfig <file>, --context <name>,
  --controller-namespace <ns> (where the repair controller keeps its journal; default nodemend-system)
`

const parse = (args: string[]) =>
  parseArgs({
    args,
    allowPositionals: true,
    options: {
      selector: { type: "string", short: "l" },
      output: { type: "string", short: "o", default: "." },
      timeout: { type: "string", short: "t", default: "300s" },
      "destination-url": { type: "string" },
      "download-url": { type: "string" },
      s3: { type: "string" },
      region: { type: "string" },
      repair: { type: "string" },
      "endpoint-url": { type: "string" },
      categories: { type: "string", default: "All" },
      "pool-label": { type: "string", multiple: true },
      config: { type: "string" },
      compare: { type: "string" },
      "repair-duration": { type: "string" },
      limit: { type: "string", default: "50" },
      for: { type: "string" },
      "print-schema": { type: "boolean" },
      reason: { type: "string" },
      message: { type: "string" },
      wait: { type: "boolean" },
      "controller-namespace": { type: "string", default: DEFAULT_CONTROLLER_NAMESPACE },
      kubeconfig: { type: "string" },
      context: { type: "string" },
      help: { type: "boolean", short: "h" }
    }
  })

/** `--s3`: presigned URLs per node, valid for the capture timeout plus 10 minutes to download. */
const s3UrlMinter = async (uri: string, regionFlag: string | undefined, timeoutMs: number) => {
  const location = parseS3Uri(uri)
  const region = regionFlag ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION
  if (!region) throw new PluginError("--s3 needs --region (or AWS_REGION)")
  const { fromNodeProviderChain } = (
    await import("@nodemend/repair-controller/aws-sigv4")
  ).loadCredentialProviders()
  const credentials = await fromNodeProviderChain()().catch((e: unknown) => {
    throw new PluginError(`no AWS credentials for --s3: ${e instanceof Error ? e.message : String(e)}`)
  })
  const expires = Math.ceil(timeoutMs / 1000) + 600
  return (node: string) => presignBundleUrls(location, region, credentials, node, expires)
}

const isLogCategory = Schema.is(LogCategory)

const fmtTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

const enc = encodeURIComponent

/** A GET through the plugin's connection, as a promise of the typed answer. */
const get = <A>(kube: KubeHttp, operation: string, path: string): Promise<A> =>
  Effect.runPromise(kube.call(operation, "GET", path)) as Promise<A>

/** The controller's planned repairs journal (none when it has planned nothing yet). */
const readPlans = (kube: KubeHttp, controllerNamespace: string) =>
  get<ConfigMap>(
    kube,
    "read planned repairs",
    namespacedPath("v1", "configmaps", controllerNamespace, PLANNED_REPAIRS_CONFIGMAP)
  ).then(plansOf, (e: unknown) => {
    if (k8sCode(e) === 404) return plansOf(undefined)
    throw e
  })

/** The planned repairs section of `status`: the nodes listed only (all when no selector). */
const printPlans = (io: CliIO, planned: ReturnType<typeof plansOf>, names: ReadonlySet<string>) => {
  io.out("")
  if (planned.error !== undefined)
    io.out(`Planned repairs: the controller's journal cannot be read (${planned.error.slice(0, 300)})`)
  const plans = planned.plans.filter((p) => names.has(p.node))
  if (plans.length === 0) {
    if (planned.error === undefined) io.out("No repair is planned for a scheduled event.")
    return
  }
  io.out(
    "Planned for EC2 scheduled events (the controller's journal; each starts at REPAIR STARTS, before NOT BEFORE):"
  )
  io.out(renderTable(PLAN_HEADERS, planRows(plans)))
}

const statusCommand = async (
  kube: KubeHttp,
  selector: string | undefined,
  poolLabels: string[],
  controllerNamespace: string,
  io: CliIO
) => {
  const nodes = (
    await get<List<Node>>(
      kube,
      "list nodes",
      `${NODES_PATH}${selector ? `?labelSelector=${enc(selector)}` : ""}`
    )
  ).items
  const journal = journalOf(
    (
      await get<List<ConfigMap>>(
        kube,
        "list repair journal",
        `/api/v1/namespaces/${enc(controllerNamespace)}/configmaps?labelSelector=${enc(`${REPAIR_JOURNAL_LABEL}=true`)}`
      )
    ).items
  )
  // Only the repair controller's events describe a breaker or a stand-down (fleet.ts filters them again).
  const events = (
    await get<List<CoreEvent>>(
      kube,
      "list events",
      `${namespacedPath("v1", "events", NODE_EVENT_NAMESPACE)}?fieldSelector=${enc(`involvedObject.kind=Node,reportingComponent=${REPAIR_CONTROLLER}`)}`
    )
  ).items
  io.out(renderTable(NODE_HEADERS, nodeRows(nodes, poolLabels, journal)))
  io.out("")
  const pools = poolStates(nodes, events, journal, poolLabels, Date.now())
  io.out(
    renderTable(
      ["POOL", "NODES", "UNHEALTHY", "REPAIRING", "BREAKER", "STAND-DOWN"],
      pools.map((p) => [
        p.pool,
        String(p.nodes),
        String(p.unhealthy),
        String(p.repairing),
        p.breaker,
        p.standDown
      ])
    )
  )
  const ledgers = (
    await get<List<ConfigMap>>(
      kube,
      "list relapse ledgers",
      `/api/v1/namespaces/${enc(controllerNamespace)}/configmaps?labelSelector=${enc(`${RELAPSE_LEDGER_LABEL}=true`)}`
    )
  ).items
  const holds = holdsOf(ledgers)
  io.out("")
  if (holds.length === 0) io.out("No repairs are held for relapse.")
  else {
    io.out(
      "Held for relapse (nodes repaired for the reason came back with it; new repairs of it in the pool wait):"
    )
    io.out(renderTable(HOLD_HEADERS, holdRows(holds)))
    io.out("Lift a hold once the cause is fixed (or let it lift by itself after its quiet period):")
    for (const h of holds)
      io.out(
        `  kubectl nodemend release ${h.pool === "<cluster>" ? "'<cluster>'" : h.pool} ${h.reason}${namespaceFlag(controllerNamespace)}`
      )
  }
  printPlans(
    io,
    await readPlans(kube, controllerNamespace),
    new Set(nodes.map((n) => n.metadata?.name ?? ""))
  )
  const held = heldPools(nodes, journal, poolLabels, selector !== undefined)
  io.out("")
  if (held.length === 0) io.out("No pool is held by a failed repair.")
  else {
    io.out("Held by a failed repair (it counts against its pool's in-flight budget until an operator acts):")
    io.out(renderTable(HELD_POOL_HEADERS, heldPoolRows(held)))
    const ns = namespaceFlag(controllerNamespace)
    io.out("Act on each failed node with one of:")
    for (const h of held) {
      io.out(`  kubectl nodemend retry ${h.node}${ns}     # repair it afresh if it is still unhealthy`)
      io.out(`  kubectl nodemend abandon ${h.node}${ns}   # never repair it automatically; fix it by hand`)
    }
  }
}

const timelineCommand = async (kube: KubeHttp, name: string, controllerNamespace: string, io: CliIO) => {
  const node = await get<Node>(kube, "read node", nodePath(name)).catch((e: unknown) => {
    throw k8sCode(e) === 404 ? new PluginError(`node not found: ${name}`) : e
  })
  // Events about a cluster-scoped Node are written to `default` (client-go, the agent, the controller); one
  // about a Node in any other namespace came from someone who can only write events there.
  const events = (
    await get<List<CoreEvent>>(
      kube,
      "list events",
      `${namespacedPath("v1", "events", NODE_EVENT_NAMESPACE)}?fieldSelector=${enc(`involvedObject.kind=Node,involvedObject.name=${name}`)}`
    )
  ).items
  const journalEntry = await get<ConfigMap>(
    kube,
    "read repair journal",
    namespacedPath("v1", "configmaps", controllerNamespace, journalName(name))
  ).then(
    (cm) => [cm],
    (e: unknown) => {
      if (k8sCode(e) === 404) return []
      throw e
    }
  )
  const planned = await readPlans(kube, controllerNamespace)
  const entries = timeline(node, events, repairOf(node, journalOf(journalEntry)), planned.plans)
  if (entries.length === 0) io.out(`no conditions or events recorded for ${name}`)
  else
    io.out(
      `${renderTable(
        ["TIME", "KIND", "FROM", "WHAT"],
        entries.map((e) => [fmtTime(e.atMs), e.kind, e.from, e.text])
      )}\n\n${TIMELINE_LEGEND}`
    )
}

/** `run` over a sink that lets no control character through, whatever a command prints. */
export const run = (argv: string[], sink: CliIO): Promise<number> =>
  runCommand(argv, {
    out: (text) => sink.out(terminalSafeLines(text)),
    err: (text) => sink.err(terminalSafeLines(text))
  })

const runCommand = async (argv: string[], io: CliIO): Promise<number> => {
  const [command, ...rest] = argv
  try {
    if (!command || command === "help" || command === "--help" || command === "-h") {
      io.out(USAGE)
      return command ? 0 : 1
    }
    const { values, positionals } = parse(rest)
    if (values.help) {
      io.out(USAGE)
      return 0
    }
    const kube = () => connect(values.kubeconfig, values.context)
    switch (command) {
      case "logs": {
        const timeoutMs = parseDurationMs(values.timeout)
        if (timeoutMs === undefined || timeoutMs <= 0)
          throw new PluginError(`invalid --timeout ${values.timeout} (e.g. 300s, 5m)`)
        if (values.repair !== undefined) {
          if (positionals.length > 0 || values.selector || values.s3 || values["destination-url"])
            throw new PluginError("--repair <node> takes no other nodes, -l, --s3 or --destination-url")
          io.out(
            terminalSafe(
              `ok   ${await repairLogsCommand(kube(), {
                node: values.repair,
                outputDir: values.output,
                timeoutMs,
                controllerNamespace: values["controller-namespace"],
                ...(values.region ? { region: values.region } : {}),
                ...(values["endpoint-url"] ? { endpoint: values["endpoint-url"] } : {})
              })}`
            )
          )
          return 0
        }
        const requested = values.categories.split(",").map((c) => c.trim())
        const categories = requested.filter(isLogCategory)
        const bad = requested.filter((c) => !isLogCategory(c))
        if (bad.length > 0)
          throw new PluginError(`unknown categories: ${bad.join(", ")} (use ${LOG_CATEGORIES.join(", ")})`)
        if (values["download-url"] && !values["destination-url"])
          throw new PluginError("--download-url needs --destination-url")
        if (values.s3 && values["destination-url"])
          throw new PluginError("--s3 and --destination-url exclude each other")
        const urlsFor = values.s3 ? await s3UrlMinter(values.s3, values.region, timeoutMs) : undefined
        const results = await Effect.runPromise(
          logsCommand(
            kube(),
            {
              nodes: positionals,
              ...(values.selector ? { selector: values.selector } : {}),
              outputDir: values.output,
              timeoutMs,
              ...(values["destination-url"] ? { destinationUrl: values["destination-url"] } : {}),
              ...(values["download-url"] ? { downloadUrl: values["download-url"] } : {}),
              ...(urlsFor ? { urlsFor } : {}),
              categories
            },
            { progress: (l) => io.err(terminalSafe(l)) }
          ).pipe(Effect.catch((e) => Effect.fail(e)))
        ).catch((e: unknown) => {
          // Effect.runPromise rejects with the failure itself (a PluginError) or a defect.
          throw e instanceof PluginError ? e : new PluginError(e instanceof Error ? e.message : String(e))
        })
        // One line per node, whatever the agent put in its status message.
        for (const r of results)
          io.out(
            terminalSafe(`${r.ok ? "ok  " : "FAIL"} ${r.node}: ${r.message}${r.file ? ` -> ${r.file}` : ""}`)
          )
        return results.every((r) => r.ok) ? 0 : 1
      }
      case "status":
        await statusCommand(
          kube(),
          values.selector,
          values["pool-label"] ?? DEFAULT_POOL_LABELS,
          values["controller-namespace"],
          io
        )
        return 0
      case "timeline": {
        const [name, ...extra] = positionals
        if (!name || extra.length > 0) throw new PluginError("usage: kubectl nodemend timeline <node>")
        await timelineCommand(kube(), name, values["controller-namespace"], io)
        return 0
      }
      case "record": {
        if (positionals.length > 0) throw new PluginError("usage: kubectl nodemend record [-o history.jsonl]")
        const forMs = values.for !== undefined ? parseDurationMs(values.for) : undefined
        if (values.for !== undefined && (forMs === undefined || forMs <= 0))
          throw new PluginError(`invalid --for ${values.for} (e.g. 30m, 24h)`)
        return await recordCommand(
          kube(),
          {
            out: values.output === "." || values.output === "-" ? undefined : values.output,
            poolLabels: values["pool-label"] ?? DEFAULT_POOL_LABELS,
            selector: values.selector,
            forMs
          },
          io
        )
      }
      case "whatif": {
        if (values["print-schema"]) {
          io.out(JSON.stringify(historyJsonSchema(), null, 2))
          return 0
        }
        const [history, ...extra] = positionals
        if (!history || extra.length > 0 || !values.config)
          throw new PluginError(
            "usage: kubectl nodemend whatif --config controller.yaml [--compare other.yaml] [-o json] history.jsonl"
          )
        const output = values.output === "." ? "text" : values.output
        if (output !== "text" && output !== "json")
          throw new PluginError(`invalid -o ${output} (text or json)`)
        const repairDurationMs =
          values["repair-duration"] !== undefined ? parseDurationMs(values["repair-duration"]) : undefined
        if (
          values["repair-duration"] !== undefined &&
          (repairDurationMs === undefined || repairDurationMs <= 0)
        )
          throw new PluginError(`invalid --repair-duration ${values["repair-duration"]} (e.g. 15m)`)
        const limit = Number(values.limit)
        if (!Number.isInteger(limit) || limit < 0) throw new PluginError(`invalid --limit ${values.limit}`)
        return await whatifCommand(
          {
            history,
            config: values.config,
            compare: values.compare,
            json: output === "json",
            repairDurationMs,
            limit
          },
          io
        )
      }
      case "retry":
      case "abandon": {
        const [name, ...extra] = positionals
        if (!name || extra.length > 0) throw new PluginError(`usage: kubectl nodemend ${command} <node>`)
        return await runRepairAction(
          kube(),
          command satisfies RepairCommand,
          name,
          values["controller-namespace"],
          io.out
        )
      }
      case "repair": {
        const [node, ...extra] = positionals
        if (!node || extra.length > 0 || !values.reason)
          throw new PluginError(
            "usage: kubectl nodemend repair <node> --reason <code> [--message <why>] [--wait]"
          )
        const timeoutMs = parseDurationMs(values.timeout)
        if (timeoutMs === undefined || timeoutMs <= 0)
          throw new PluginError(`invalid --timeout ${values.timeout} (e.g. 300s, 30m)`)
        return await repairRequestCommand(
          kube(),
          {
            node,
            reason: values.reason,
            ...(values.message !== undefined ? { message: values.message } : {}),
            wait: values.wait === true,
            timeoutMs,
            controllerNamespace: values["controller-namespace"]
          },
          (line) => io.out(terminalSafe(line))
        )
      }
      case "release": {
        const [pool, reason, ...extra] = positionals
        if (!pool || !reason || extra.length > 0)
          throw new PluginError("usage: kubectl nodemend release <pool> <reason>")
        return await runRelease(kube(), pool, reason, values["controller-namespace"], io.out)
      }
      default:
        throw new PluginError(`unknown command ${command}\n\n${USAGE}`)
    }
  } catch (e) {
    if (e instanceof PluginError) io.err(`error: ${e.message}`)
    else if (k8sCode(e) !== undefined) io.err(`error: ${k8sMessage(e)}`)
    else io.err(`error: ${e instanceof Error ? e.message : String(e)}`)
    return 1
  }
}
