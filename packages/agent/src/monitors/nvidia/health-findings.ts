/**
 * DCGM health check (dcgmHealthCheck on all GPUs, every poll) -> findings. An incident with health FAIL sets
 * the condition (`DCGMHealthCode{code}` as a Condition, the catalog's DCGMHealthCodeFatal variant), WARN is an
 * Event with the same reason string, and dcgmError_t 122 (IMEX domain/daemon unhealthy: not a GPU fault) is
 * skipped, as the EKS Node Monitoring Agent does. A FAIL that a later check no longer reports for the same
 * entity resolves (recovery `auto`). Pure: the caller keeps the set of failing keys between checks.
 */
import { DcgmErrorCode, type HealthReport } from "@nodemend/dcgm-native"
import type { Finding } from "../../model.ts"
import { nvidiaDetection, nvidiaResolution } from "./findings.ts"
import type { SubjectOf } from "./polled-findings.ts"

/** A raised FAIL incident: its code and the entity it names. */
export interface FailingIncident {
  readonly code: number
  readonly subject: string
}

const key = (f: FailingIncident) => `${f.code}\u0000${f.subject}`
const reasonOf = (code: number) => `DCGMHealthCode${code}`

export const healthMessage = (code: number, detail: string): string => {
  const base = `DCGM detected issues in health check system with error code ${code}`
  const d = detail.trim()
  return d === "" ? base : `${base}: ${d}`
}

export const healthCheckFindings = (
  report: HealthReport,
  previouslyFailing: readonly FailingIncident[],
  atMs: number,
  subjectOf: SubjectOf
): { readonly findings: readonly Finding[]; readonly failing: readonly FailingIncident[] } => {
  const findings: Finding[] = []
  const failing = new Map<string, FailingIncident>()
  for (const incident of report.incidents) {
    if (incident.code === DcgmErrorCode.IMEX_UNHEALTHY || incident.health === "Pass") continue
    const subject = subjectOf(incident.entityGroupId, incident.entityId)
    const detection = nvidiaDetection(
      reasonOf(incident.code),
      healthMessage(incident.code, incident.message),
      atMs,
      subject
    )
    if (incident.health === "Fail") {
      const f = { code: incident.code, subject }
      if (failing.has(key(f))) continue
      failing.set(key(f), f)
      findings.push({ ...detection, severity: "Condition" })
    } else findings.push(detection)
  }
  for (const prev of previouslyFailing)
    if (!failing.has(key(prev))) findings.push(nvidiaResolution(reasonOf(prev.code), atMs, prev.subject))
  return { findings, failing: [...failing.values()] }
}
