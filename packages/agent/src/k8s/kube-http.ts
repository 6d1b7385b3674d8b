/**
 * The agent's connection to the API server: the shared client (`@nodemend/kube-access`, ADR 0011) with the
 * agent's settings: a 10 s answer timeout on the fault -> condition path; up to 4 sockets when calls overlap
 * (a condition patch beside an Event), but only one kept idle, so the idle agent holds two TLS connections:
 * the NodeDiagnostic watch and one for calls (each one kept costs memory on every node of the fleet).
 */
import { type KubeAccess, type KubeHttp, makeKubeHttp as makeSharedKubeHttp } from "@nodemend/kube-access"

export type { KubeHttp } from "@nodemend/kube-access"

export const makeKubeHttp = (access: KubeAccess): KubeHttp =>
  makeSharedKubeHttp(access, {
    userAgent: "nodemend-agent",
    requestTimeoutMs: 10_000,
    maxSockets: 4,
    maxFreeSockets: 1
  })
