/**
 * The controller's connection to the API server: the shared client (`@nodemend/kube-access`, ADR 0011) with
 * the controller's settings, and the error its informer's first list fails with.
 */
import { type KubeAccess, type KubeError, type KubeHttp, makeKubeHttp } from "@nodemend/kube-access"

/** Connections of the pooled client. */
export const CONTROLLER_CONNECTIONS = 96

/**
 * Up to 96 connections, all kept: a closed one costs a TLS handshake on both ends when the next burst (a
 * wave of expiries) comes, on the critical path from expiry to taint.
 */
export const makeControllerHttp = (access: KubeAccess): KubeHttp =>
  makeKubeHttp(access, {
    userAgent: "nodemend-controller/0.1",
    requestTimeoutMs: 30_000,
    maxSockets: CONTROLLER_CONNECTIONS
  })

/**
 * The Lease's own connection, as client-go's leader election has its own client: in a burst the pooled
 * client's requests queue for a free connection, and a renewal queued behind them missed its renew deadline
 * (a 5,000-node bench lost the lease this way and the controller exited). One kept connection: a renewal
 * every few seconds needs no more.
 */
export const makeLeaseHttp = (access: KubeAccess): KubeHttp =>
  makeKubeHttp(access, {
    userAgent: "nodemend-controller/0.1 leader-election",
    requestTimeoutMs: 30_000,
    maxSockets: 1
  })

/** The informer's first Node list was answered with a non-2xx status (initialSync.ts reads `statusCode`). */
export class HttpStatusError extends Error {
  readonly statusCode: number
  readonly body: string
  constructor(statusCode: number, body: string) {
    super(`HTTP ${statusCode}: ${body.slice(0, 300)}`)
    this.statusCode = statusCode
    this.body = body
  }
}

/** A KubeError as the informer's start reports it: an HttpStatusError when the server answered. */
export const startError = (e: KubeError): Error =>
  e.code === undefined ? new Error(e.message) : new HttpStatusError(e.code, e.message)
