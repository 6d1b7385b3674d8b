// The import rules `npm test` enforces (unit phase, `npm run check:deps`): no import cycle anywhere in the
// repo, and the layers of the repair controller and of the node agent (docs/architecture.md). Type-only imports
// count like any other.
//
// TypeScript 7 has no JavaScript API for dependency-cruiser to parse with, so it parses with swc, which keeps
// `import type` (the layer rules must see those: most of what crossed layers was types). Without swc the
// check fails here rather than parse nothing.
require.resolve("@swc/core")

const RC = "^packages/repair-controller/src"

/**
 * The repair controller's folders, lowest first. A folder may import its own layer's files and any layer below
 * it, never a layer above, nor another folder of its own layer. The files at src/ (main.ts, cli.ts, index.ts)
 * are the top: nothing imports them.
 */
const LAYERS = [
  // Plain data and its schema (NodeView, PodView, Instance, NodePool, the repair record); the metric definitions.
  ["domain", "observability"],
  // The config file, its units and sections (the `aws:` one included).
  ["config"],
  // Pure decisions: toleration, policy match, breaker, in-flight budget, zonal-shift gate, identity.
  ["decide"],
  // The repair state machine, its deadlines and retry budget, the drain plan, the log-capture port.
  ["repair"],
  // The Kubernetes client and its Events writer.
  ["kube"],
  // Adapters: cloud providers, the Karpenter informer, the pre-termination log capture.
  ["cloud", "karpenter", "diagnostics"],
  // The owner port (prove identity, add capacity, remove the machine) and its adapters: Karpenter, Auto Scaling,
  // launch template, kwok.
  ["owner"],
  // The steps of a repair (taint, drain, capture logs, reboot; the owner's steps through the owner port).
  ["actions"],
  // Informers, work queue, reconcile, journal, leader election.
  ["controller"],
  // What-if replay: the controller itself over a recorded history, with an API server in memory and TestClock.
  ["whatif"]
]

const AGENT = "^packages/agent/src"

/**
 * The node agent's folders, lowest first, under the same rule. src/model.ts (findings, monitor names) is below
 * them all and imports none of them; main.ts, index.ts and finding-routes.ts (the binary's composition) are the
 * top: no folder imports them.
 */
const AGENT_LAYERS = [
  // The HTTP client over node:http(s).
  ["platform"],
  // The agent's metrics and health server; the log rules as data, their compiler and engine (pure).
  ["health", "rules"],
  // The config file: its schema (the NVIDIA settings, the checks' names, the upload allowlist) and overrides.
  ["config"],
  // The containerd CRI client; the periodic-check scheduler; the log readers, their registry and finding lanes.
  ["cri", "scheduler", "sources"],
  // The periodic host checks.
  ["checks"],
  // The NVIDIA monitor (DCGM/NVML); which filesystem a mount's fault belongs to; promoted recovery.
  ["monitors", "mounts", "recovery"],
  // The Kubernetes side: the condition writer, the Event recorder and its budget, the shed-findings Event.
  ["k8s"],
  // Diagnosis (log bundles, NodeDiagnostic), off the detection path.
  ["diagnostics"],
  // The `rules` and `redact` subcommands.
  ["cli"]
]

const folders = (root, names) => `${root}/(${names.join("|")})/`

const layerRules = (root, layers, prefix) =>
  layers.flatMap((layer, i) => {
    const above = layers.slice(i + 1).flat()
    return layer.map((folder) => {
      const siblings = layer.filter((f) => f !== folder)
      const banned = [...above, ...siblings]
      return {
        name: `${prefix}layer-${folder}`,
        comment: `src/${folder}/ may import only ${[...layers.slice(0, i).flat(), folder].join(", ")} (docs/architecture.md)`,
        severity: "error",
        from: { path: `${root}/${folder}/` },
        to: { path: banned.length > 0 ? folders(root, banned) : "^$" }
      }
    })
  })

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycle anywhere: move what both sides need into a module they both import.",
      severity: "error",
      from: {},
      to: { circular: true }
    },
    {
      name: "no-folder-cycle",
      comment:
        "No two folders of the repair controller import each other (directly or around a circle of folders): " +
        "what both need belongs in the lower one.",
      severity: "error",
      scope: "folder",
      from: { path: `${RC}/` },
      to: { path: `${RC}/`, circular: true }
    },
    {
      name: "layer-top",
      comment: "main.ts, cli.ts and index.ts are the top of the repair controller: no folder imports them.",
      severity: "error",
      from: { path: `${RC}/[^/]+/` },
      to: { path: `${RC}/[^/]+\\.ts$` }
    },
    {
      name: "layer-unknown-folder",
      comment: "Every folder of the repair controller's src/ has a layer: add a new one to LAYERS.",
      severity: "error",
      from: { path: `${RC}/[^/]+/`, pathNot: folders(RC, LAYERS.flat()) },
      to: {}
    },
    ...layerRules(RC, LAYERS, ""),
    {
      name: "agent-no-folder-cycle",
      comment:
        "No two folders of the node agent import each other (directly or around a circle of folders): " +
        "what both need belongs in the lower one.",
      severity: "error",
      scope: "folder",
      from: { path: `${AGENT}/` },
      to: { path: `${AGENT}/`, circular: true }
    },
    {
      name: "agent-layer-top",
      comment:
        "main.ts, index.ts and finding-routes.ts are the top of the node agent: no folder imports them.",
      severity: "error",
      from: { path: `${AGENT}/[^/]+/` },
      to: { path: `${AGENT}/[^/]+\\.ts$`, pathNot: `${AGENT}/model\\.ts$` }
    },
    {
      name: "agent-layer-model",
      comment: "src/model.ts is the node agent's lowest layer: it imports none of the agent's folders.",
      severity: "error",
      from: { path: `${AGENT}/model\\.ts$` },
      to: { path: `${AGENT}/[^/]+/` }
    },
    {
      name: "agent-layer-unknown-folder",
      comment: "Every folder of the node agent's src/ has a layer: add a new one to AGENT_LAYERS.",
      severity: "error",
      from: { path: `${AGENT}/[^/]+/`, pathNot: folders(AGENT, AGENT_LAYERS.flat()) },
      to: {}
    },
    ...layerRules(AGENT, AGENT_LAYERS, "agent-")
  ],
  options: {
    parser: "swc",
    // Every package's own code and the repo's scripts; tests, node_modules and build output are not cruised.
    includeOnly: "^(packages/[^/]+/(src|bin)|tools|scripts)/",
    exclude: { path: "(^|/)(node_modules|dist|\\.turbo|\\.nodemend)/" },
    doNotFollow: { path: "node_modules" },
    moduleSystems: ["es6", "cjs"],
    // Workspace packages resolve to their src/ through the `source` condition, as vitest and node do here.
    enhancedResolveOptions: {
      conditionNames: ["source", "import", "node", "default"],
      extensions: [".ts", ".mts", ".mjs", ".js", ".d.mts"]
    }
  }
}
// For tools/deps/folder-graph.mjs (not a dependency-cruiser option, so not enumerable).
Object.defineProperty(module.exports, "LAYERS", { value: LAYERS })
Object.defineProperty(module.exports, "AGENT_LAYERS", { value: AGENT_LAYERS })
