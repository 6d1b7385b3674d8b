/**
 * The periodic checks the agent runs, by name, with the monitor (and so the condition type) each belongs
 * to and its default interval. Config keys under `checks:` must be one of these names.
 */
import type { MonitorName } from "@nodemend/reason-codes"

export const CHECKS = {
  "pid-usage": { monitor: "kernel", intervalSeconds: 300 },
  "open-files": { monitor: "kernel", intervalSeconds: 300 },
  zombies: { monitor: "kernel", intervalSeconds: 300 },
  environment: { monitor: "kernel", intervalSeconds: 300 },
  zram: { monitor: "kernel", intervalSeconds: 300 },
  "clock-sync": { monitor: "kernel", intervalSeconds: 300 },
  conntrack: { monitor: "kernel", intervalSeconds: 60 },
  interfaces: { monitor: "networking", intervalSeconds: 300 },
  ipamd: { monitor: "networking", intervalSeconds: 300 },
  "ip-forward": { monitor: "networking", intervalSeconds: 300 },
  "ena-allowances": { monitor: "networking", intervalSeconds: 300 },
  "efa-counters": { monitor: "networking", intervalSeconds: 60 },
  iptables: { monitor: "networking", intervalSeconds: 300 },
  "iptables-mode": { monitor: "networking", intervalSeconds: 3600 },
  "ip-routing": { monitor: "networking", intervalSeconds: 300 },
  "ipamd-state": { monitor: "networking", intervalSeconds: 300 },
  "mac-address-policy": { monitor: "networking", intervalSeconds: 300 },
  npa: { monitor: "networking", intervalSeconds: 300 },
  "io-delays": { monitor: "storage", intervalSeconds: 600 },
  "xfs-fragmentation": { monitor: "storage", intervalSeconds: 600 },
  "ebs-performance": { monitor: "storage", intervalSeconds: 600 },
  "systemd-restarts": { monitor: "container-runtime", intervalSeconds: 300 },
  "containerd-deprecations": { monitor: "container-runtime", intervalSeconds: 3600 },
  "kubelet-health": { monitor: "container-runtime", intervalSeconds: 60 },
  "runtime-health": { monitor: "container-runtime", intervalSeconds: 60 }
} as const satisfies Record<string, { readonly monitor: MonitorName; readonly intervalSeconds: number }>

export type CheckName = keyof typeof CHECKS
export const CHECK_NAMES = Object.keys(CHECKS) as readonly CheckName[]
