/**
 * AWS SDK failures -> CloudError. `retryable` says whether the same call may succeed later:
 * throttling, 5xx, timeouts and network errors. The SDK has already retried these `maxAttempts`
 * times by the time we see them.
 */
import { Effect } from "effect"
import { CloudError } from "../CloudProvider.ts"

const THROTTLING = new Set([
  "RequestLimitExceeded",
  "Throttling",
  "ThrottlingException",
  "ThrottledException",
  "RequestThrottled",
  "RequestThrottledException",
  "TooManyRequestsException",
  "ProvisionedThroughputExceededException",
  "SlowDown",
  "EC2ThrottledException"
])
const TRANSIENT = new Set([
  "InternalError",
  "InternalFailure",
  "ServiceUnavailable",
  "Unavailable",
  "RequestTimeout",
  "RequestTimeoutException",
  "TimeoutError",
  "AbortError",
  "InsufficientInstanceCapacity"
])

interface SdkErrorLike {
  readonly name?: string
  readonly message?: string
  readonly code?: string
  readonly $fault?: "client" | "server"
  readonly $retryable?: unknown
  readonly $metadata?: { readonly httpStatusCode?: number; readonly requestId?: string }
}

/** The AWS error code of an SDK error (`InvalidInstanceID.NotFound`), if any. */
const awsErrorCode = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null ? ((e as SdkErrorLike).name ?? (e as SdkErrorLike).code) : undefined

export function toCloudError(operation: string, e: unknown): CloudError {
  const err = (typeof e === "object" && e !== null ? e : {}) as SdkErrorLike
  const code = err.name ?? err.code ?? "Error"
  const status = err.$metadata?.httpStatusCode
  const network = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EAI_AGAIN|socket hang up/i.test(
    err.message ?? ""
  )
  const retryable =
    THROTTLING.has(code) ||
    TRANSIENT.has(code) ||
    err.$retryable !== undefined ||
    err.$fault === "server" ||
    (status !== undefined && (status >= 500 || status === 429)) ||
    network
  const requestId = err.$metadata?.requestId
  return new CloudError({
    operation,
    message: `${operation} failed: ${code}${status ? ` (HTTP ${status})` : ""}: ${err.message ?? String(e)}${requestId ? ` [request ${requestId}]` : ""}`,
    retryable,
    cause: e
  })
}

/** One AWS SDK call as an Effect: interrupting it aborts the request; a failure is a CloudError. */
export const awsCall = <A>(
  operation: string,
  send: (abortSignal: AbortSignal) => Promise<A>
): Effect.Effect<A, CloudError> => Effect.tryPromise({ try: send, catch: (e) => toCloudError(operation, e) })

/** EC2's `InvalidInstanceID.NotFound` as the value `gone`: the instance no longer exists. */
export const whenNotFound =
  <B>(gone: B) =>
  <A>(call: Effect.Effect<A, CloudError>): Effect.Effect<A | B, CloudError> =>
    Effect.catchIf(
      call,
      (e) => awsErrorCode(e.cause) === "InvalidInstanceID.NotFound",
      () => Effect.succeed(gone)
    )
