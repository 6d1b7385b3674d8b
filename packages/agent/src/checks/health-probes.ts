/**
 * KubeletUnhealthy and ContainerRuntimeUnhealthy: node-problem-detector's health checkers
 * (config/health-checker-kubelet.json and config/health-checker-containerd.json at v1.36.0, the
 * `health-checker` binary, pkg/healthchecker): every 10 s NPD GETs kubelet's `http://localhost:10248/healthz`
 * (`--health-check-timeout=10s`) and runs `crictl pods` (CRI ListPodSandbox, `--health-check-timeout=60s`), and
 * sets the permanent conditions KubeletUnhealthy / ContainerRuntimeUnhealthy (reason ContainerdUnhealthy) on the
 * first failure; past its cooldown (1 min, 2 min) it `systemctl kill`s the unit itself.
 *
 * Here a probe every minute (the checks' interval), each within 10 s (the runtime's too: a probe runs on the
 * checks' shared queue, and 60 s would hold every other check), a Condition after `healthProbeFailures` (3)
 * failed probes in a row, as NMA makes its other "stays broken" reasons Conditions (NPANotRunning, IPAMDNotReady), and a
 * Resolution once the probe passes again. The agent never restarts kubelet or containerd: repair replaces
 * the node after the policy's toleration.
 *
 * Only where it applies (absent, not Unknown: a check that cannot watch reports nothing):
 * - kubelet: the check watches once it has seen kubelet on the host (its JSON config file, or a `kubelet`
 *   process in the host's /proc), so a node (or a simulated test host) without kubelet gets nothing, while a
 *   kubelet that dies after that keeps failing the probe. The endpoint comes from the kubelet's JSON config file where there is
 *   one (EKS AL2 `/etc/kubernetes/kubelet/kubelet-config.json`, AL2023 `/etc/kubernetes/kubelet/config.json`:
 *   `healthzBindAddress`, `healthzPort`); `healthzPort: 0` disables kubelet's endpoint and the check.
 * - runtime: the check watches once containerd's CRI socket (`<host-root>/run/containerd/containerd.sock`)
 *   has existed; after that a missing socket is a failed probe. The probe is CRI `Status` (RuntimeReady must
 *   not be false) and `ListPodSandbox`, over the agent's own CRI client.
 */
import { Effect } from "effect"
import { CONTAINERD_SOCKET, type CriRuntimeClient } from "../cri/runtime-client.ts"
import { runtimeNotReady } from "../cri/runtime-health.ts"
import type { Finding } from "../model.ts"
import { getText } from "../platform/node-http.ts"
import type { PeriodicCheck } from "../scheduler/periodic-check.ts"
import { detection, resolution } from "./finding.ts"
import type { HostFiles } from "./host-files.ts"

export type ProbeVerdict =
  | { readonly _tag: "NotWatching" }
  | { readonly _tag: "Healthy" }
  | { readonly _tag: "Unhealthy"; readonly detail: string }

export interface ProbeMemory {
  readonly failures: number
  readonly reported: boolean
}

export const PROBE_INITIAL: ProbeMemory = { failures: 0, reported: false }

/** The decision for one probe: consecutive failures up to `threshold` raise `reason`, a pass resolves it. */
export const probeStep = (
  memory: ProbeMemory,
  verdict: ProbeVerdict,
  reason: "KubeletUnhealthy" | "ContainerRuntimeUnhealthy",
  threshold: number,
  nowMs: number
): { readonly findings: Finding[]; readonly memory: ProbeMemory } => {
  if (verdict._tag !== "Unhealthy")
    return { findings: memory.reported ? [resolution(reason, nowMs)] : [], memory: PROBE_INITIAL }
  const failures = memory.failures + 1
  if (failures < threshold) return { findings: [], memory: { failures, reported: memory.reported } }
  const what = reason === "KubeletUnhealthy" ? "kubelet health check" : "Container runtime health check"
  return {
    findings: [detection(reason, `${what} failed ${failures} times in a row: ${verdict.detail}`, nowMs)],
    memory: { failures, reported: true }
  }
}

// ---------------------------------------------------------------- kubelet

export const KUBELET_CONFIG_PATHS = [
  "etc/kubernetes/kubelet/config.json",
  "etc/kubernetes/kubelet/kubelet-config.json"
] as const
export const KUBELET_HEALTHZ_DEFAULT = { address: "127.0.0.1", port: 10248 } as const
const PROBE_TIMEOUT_MS = 10_000

/**
 * kubelet's healthz endpoint from its KubeletConfiguration (JSON), undefined when the config disables it
 * (`healthzPort: 0`). A wildcard or absent bind address is probed on 127.0.0.1; unparsable config: defaults.
 */
export const kubeletHealthzUrl = (configText: string | undefined): string | undefined => {
  let address: string = KUBELET_HEALTHZ_DEFAULT.address
  let port: number = KUBELET_HEALTHZ_DEFAULT.port
  if (configText !== undefined) {
    try {
      const c = JSON.parse(configText) as { healthzBindAddress?: unknown; healthzPort?: unknown }
      if (typeof c.healthzPort === "number" && Number.isInteger(c.healthzPort)) port = c.healthzPort
      const a = c.healthzBindAddress
      if (typeof a === "string" && a !== "" && a !== "0.0.0.0" && a !== "::") address = a
    } catch {
      // not JSON: kubelet's defaults
    }
  }
  if (port <= 0 || port > 65535) return undefined
  return `http://${address.includes(":") ? `[${address}]` : address}:${port}/healthz`
}

export type HttpProbe = (url: string, timeoutMs: number) => Promise<string | undefined>

const httpProbe: HttpProbe = (url, timeoutMs) => getText(url, timeoutMs)

const kubeletRunning = (files: HostFiles, pids: readonly number[]): Effect.Effect<boolean> =>
  Effect.gen(function* () {
    for (const pid of pids) if ((yield* files.text(`proc/${pid}/comm`))?.trim() === "kubelet") return true
    return false
  })

const readKubeletConfig = (files: HostFiles): Effect.Effect<string | undefined> =>
  Effect.gen(function* () {
    for (const p of KUBELET_CONFIG_PATHS) {
      const text = yield* files.text(p)
      if (text !== undefined) return text
    }
    return undefined
  })

export const kubeletHealthCheck = (
  files: HostFiles,
  threshold: number,
  intervalMs: number,
  probe: HttpProbe = httpProbe
): PeriodicCheck => {
  let memory = PROBE_INITIAL
  let seen = false
  return {
    name: "kubelet-health",
    monitor: "container-runtime",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        const config = yield* readKubeletConfig(files)
        if (!seen) seen = config !== undefined || (yield* kubeletRunning(files, yield* tick.pids))
        const url = kubeletHealthzUrl(config)
        let verdict: ProbeVerdict = { _tag: "NotWatching" }
        if (seen && url !== undefined) {
          verdict = yield* Effect.promise(() =>
            probe(url, PROBE_TIMEOUT_MS).then(
              (body): ProbeVerdict =>
                body === undefined
                  ? { _tag: "Unhealthy", detail: `GET ${url} answered with an error status` }
                  : body.trim() === "ok"
                    ? { _tag: "Healthy" }
                    : {
                        _tag: "Unhealthy",
                        detail: `GET ${url} answered ${JSON.stringify(body.trim().slice(0, 200))}`
                      },
              (e: unknown): ProbeVerdict => ({
                _tag: "Unhealthy",
                detail: `GET ${url}: ${e instanceof Error ? e.message : String(e)}`
              })
            )
          )
        }
        const step = probeStep(memory, verdict, "KubeletUnhealthy", threshold, tick.nowMs)
        memory = step.memory
        return step.findings
      })
  }
}

// ---------------------------------------------------------------- container runtime

export const runtimeHealthCheck = (
  files: HostFiles,
  cri: CriRuntimeClient,
  threshold: number,
  intervalMs: number
): PeriodicCheck => {
  let memory = PROBE_INITIAL
  let seen = false
  return {
    name: "runtime-health",
    monitor: "container-runtime",
    intervalMs,
    run: (tick) =>
      Effect.gen(function* () {
        let verdict: ProbeVerdict
        if (!(yield* files.exists(CONTAINERD_SOCKET)))
          verdict = seen
            ? { _tag: "Unhealthy", detail: `no CRI socket at /${CONTAINERD_SOCKET}` }
            : { _tag: "NotWatching" }
        else {
          seen = true
          verdict = yield* cri.probe().pipe(
            Effect.map((conditions): ProbeVerdict => {
              const why = runtimeNotReady(conditions)
              return why === undefined ? { _tag: "Healthy" } : { _tag: "Unhealthy", detail: why }
            }),
            Effect.catch((e) => Effect.succeed<ProbeVerdict>({ _tag: "Unhealthy", detail: e.message }))
          )
        }
        const step = probeStep(memory, verdict, "ContainerRuntimeUnhealthy", threshold, tick.nowMs)
        memory = step.memory
        return step.findings
      })
  }
}
