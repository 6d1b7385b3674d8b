/**
 * The command line of nodemend-controller: pure parsing, so `--help` and bad flags are answered before
 * anything starts (usage on stdout and exit 0 for --help; the error and usage on stderr and exit 2 otherwise).
 */
import { parseArgs } from "node:util"

export const USAGE = `Usage: nodemend-controller --config <file> [options]

The nodemend repair controller: waits out toleration windows on Node conditions, checks fleet safety
(per-pool breaker, zonal-shift stand-down), then taints, drains through PodDisruptionBudgets and replaces
broken nodes. Two replicas elect a leader through a Lease.

Options:
  --config <file>      controller configuration (YAML; see docs/repair-controller.md)   required
  --kubeconfig <file>  kubeconfig to use (default: $KUBECONFIG, the in-cluster service account, ~/.kube/config)
  --identity <name>    leader-election identity (default: <hostname>-<pid>)
  --port <n>           port of /healthz, /readyz and /metrics (default: server.port from the config, 8080)
  -h, --help           print this help and exit
`

export interface CliOptions {
  readonly config: string
  readonly kubeconfig: string | undefined
  readonly identity: string | undefined
  readonly port: number | undefined
}

export type Cli =
  | { readonly _tag: "Run"; readonly options: CliOptions }
  | { readonly _tag: "Help" }
  | { readonly _tag: "Invalid"; readonly message: string }

export const parseCli = (argv: ReadonlyArray<string>): Cli => {
  let values: { config?: string; kubeconfig?: string; identity?: string; port?: string; help?: boolean }
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        config: { type: "string" },
        kubeconfig: { type: "string" },
        identity: { type: "string" },
        port: { type: "string" },
        help: { type: "boolean", short: "h" }
      }
    }).values
  } catch (e) {
    // node:util's messages name the flag ("Unknown option '--foo'"); drop its hint about `--` for positionals.
    return { _tag: "Invalid", message: String((e as Error).message).split(". To specify")[0]! }
  }
  if (values.help === true) return { _tag: "Help" }
  if (values.config === undefined) return { _tag: "Invalid", message: "--config is required" }
  let port: number | undefined
  if (values.port !== undefined) {
    port = Number(values.port)
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      return { _tag: "Invalid", message: `--port must be an integer from 0 to 65535, got '${values.port}'` }
  }
  return {
    _tag: "Run",
    options: { config: values.config, kubeconfig: values.kubeconfig, identity: values.identity, port }
  }
}
