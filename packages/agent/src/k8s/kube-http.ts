/**
 * The agent's connection to the API server: the shared client (`@nodemend/kube-access`, ADR 0010) with the
 * agent's settings: a 10 s answer timeout on the fault -> condition path, at most 4 sockets (one while
 * calls do not overlap with the NodeDiagnostic watch).
 */
import { type KubeAccess, type KubeHttp, makeKubeHttp as makeSharedKubeHttp } from "@nodemend/kube-access"

export type { KubeHttp } from "@nodemend/kube-access"

export const makeKubeHttp = (access: KubeAccess): KubeHttp =>
  makeSharedKubeHttp(access, { userAgent: "nodemend-agent", requestTimeoutMs: 10_000, maxSockets: 4 })
