// The test Prometheus' HTTP API as the cluster stories read it: instant queries and the active alerts.
import { waitFor } from "@nodemend/cluster-harness"

export interface ActiveAlert {
  readonly labels: Record<string, string>
  readonly state: "pending" | "firing"
}

export const prometheusApi = (url: string) => {
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`)
    const body = (await res.json()) as { status: string; data: T; error?: string }
    if (body.status !== "success") throw new Error(`${path}: ${body.error ?? res.status}`)
    return body.data
  }
  const activeAlerts = () => api<{ alerts: ActiveAlert[] }>("/api/v1/alerts").then((d) => d.alerts)
  const instant = (expr: string) =>
    api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
      `/api/v1/query?query=${encodeURIComponent(expr)}`
    ).then((d) => d.result)
  /**
   * Waits until the active alerts satisfy `ok`; fails naming what was active last and what `diagnose` says.
   */
  const alertsUntil = async (
    what: string,
    ok: (alerts: ReadonlyArray<ActiveAlert>) => boolean,
    diagnose: () => Promise<string>,
    timeoutMs = 120_000
  ) => {
    let last: ActiveAlert[] = []
    await waitFor(
      what,
      async () => {
        last = await activeAlerts()
        return ok(last) ? true : undefined
      },
      { timeoutMs, intervalMs: 500 }
    ).catch(async (e: unknown) => {
      throw new Error(`${(e as Error).message}\nactive alerts:\n${show(last)}\n${await diagnose()}`)
    })
    return last
  }
  return { activeAlerts, instant, alertsUntil }
}

export const show = (alerts: ReadonlyArray<ActiveAlert>) =>
  alerts.map((a) => `${a.labels.alertname}${JSON.stringify(a.labels)} ${a.state}`).join("\n") || "(none)"

export const hasAlert = (
  alerts: ReadonlyArray<ActiveAlert>,
  name: string,
  state: string,
  labels: Record<string, string> = {}
) =>
  alerts.some(
    (a) =>
      a.labels.alertname === name &&
      a.state === state &&
      Object.entries(labels).every(([k, v]) => a.labels[k] === v)
  )
