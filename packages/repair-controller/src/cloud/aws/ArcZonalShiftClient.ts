/**
 * A small ARC zonal shift client (REST-JSON, SigV4 service name `arc-zonal-shift`). The package
 * registry does not serve `@aws-sdk/client-arc-zonal-shift`, so we sign with `@smithy/signature-v4`
 * and send with fetch. Every failure becomes a CloudError; the controller's zonal-shift gate fails
 * closed on it.
 */
import { Context, Effect, Layer, Schedule, Schema } from "effect"
import { CloudError } from "../CloudProvider.ts"
import {
  ArcErrorBody,
  type AutoshiftSummary,
  GetManagedResourceResponse,
  ListAutoshiftsResponse,
  ListZonalShiftsResponse,
  type ZonalShiftSummary
} from "./ArcZonalShiftSchemas.ts"
import { type AwsCredentialIdentityProvider, HttpRequest, sigV4Signer } from "./sigv4.ts"

export interface ArcZonalShiftClientOptions {
  readonly region: string
  /** Defaults to `https://arc-zonal-shift.<region>.amazonaws.com`. */
  readonly endpoint?: string | undefined
  readonly credentials: AwsCredentialIdentityProvider
  readonly requestTimeoutMs: number
  /** Total tries per call, including the first (SDK semantics). */
  readonly maxAttempts: number
}

export interface ArcZonalShiftClientShape {
  readonly getManagedResource: (resourceArn: string) => Effect.Effect<GetManagedResourceResponse, CloudError>
  /** All ACTIVE zonal shifts of the account (every page). */
  readonly listActiveZonalShifts: (
    resourceArn: string
  ) => Effect.Effect<ReadonlyArray<ZonalShiftSummary>, CloudError>
  /** All ACTIVE autoshifts of the account (every page). */
  readonly listActiveAutoshifts: Effect.Effect<ReadonlyArray<AutoshiftSummary>, CloudError>
}

export class ArcZonalShiftClient extends Context.Service<ArcZonalShiftClient, ArcZonalShiftClientShape>()(
  "nodemend/aws/ArcZonalShiftClient"
) {
  static readonly layer = (options: ArcZonalShiftClientOptions) =>
    Layer.succeed(ArcZonalShiftClient, ArcZonalShiftClient.of(makeArcZonalShiftClient(options)))
}

export const defaultArcEndpoint = (region: string) => `https://arc-zonal-shift.${region}.amazonaws.com`

/** Error codes (the `x-amzn-ErrorType` prefix) worth repeating. */
const RETRYABLE_CODES = new Set([
  "ThrottlingException",
  "InternalServerException",
  "ServiceUnavailableException"
])

interface ArcCall {
  readonly operation: string
  readonly path: string
  readonly query: Record<string, string>
}

export function makeArcZonalShiftClient(options: ArcZonalShiftClientOptions): ArcZonalShiftClientShape {
  const endpoint = new URL(options.endpoint ?? defaultArcEndpoint(options.region))
  const basePath = endpoint.pathname.replace(/\/+$/, "")
  const signer = sigV4Signer({
    service: "arc-zonal-shift",
    region: options.region,
    credentials: options.credentials
  })

  const once = (call: ArcCall): Effect.Effect<unknown, CloudError> =>
    Effect.tryPromise({
      try: async () => {
        const request = new HttpRequest({
          method: "GET",
          protocol: endpoint.protocol,
          hostname: endpoint.hostname,
          ...(endpoint.port ? { port: Number(endpoint.port) } : {}),
          path: basePath + call.path,
          query: call.query,
          headers: { host: endpoint.host, accept: "application/json" }
        })
        const signed = await signer.sign(request)
        const qs = new URLSearchParams(call.query).toString()
        const url = `${endpoint.protocol}//${endpoint.host}${signed.path}${qs ? `?${qs}` : ""}`
        const headers = { ...(signed.headers as Record<string, string>) }
        delete headers.host // fetch sets Host itself and refuses to be told
        const res = await fetch(url, {
          method: "GET",
          headers,
          signal: AbortSignal.timeout(options.requestTimeoutMs)
        })
        const text = await res.text()
        return { status: res.status, errorType: res.headers.get("x-amzn-errortype"), text }
      },
      catch: (cause) =>
        new CloudError({
          operation: call.operation,
          message: `ARC ${call.operation} request failed: ${cause instanceof Error ? cause.message : String(cause)}`,
          retryable: true,
          cause
        })
    }).pipe(
      Effect.flatMap(({ status, errorType, text }) => {
        if (status >= 200 && status < 300) {
          return Effect.try({
            try: () => JSON.parse(text) as unknown,
            catch: (cause) =>
              new CloudError({
                operation: call.operation,
                message: `ARC ${call.operation}: response is not JSON`,
                retryable: false,
                cause
              })
          })
        }
        return Effect.fail(arcError(call.operation, status, errorType, text))
      })
    )

  const send = <S extends Schema.Top & { readonly DecodingServices: never }>(
    call: ArcCall,
    schema: S
  ): Effect.Effect<S["Type"], CloudError> =>
    once(call).pipe(
      Effect.retry(
        Schedule.exponential("200 millis", 2).pipe(
          Schedule.jittered,
          Schedule.setInputType<CloudError>(),
          Schedule.while(({ input, attempt }) => input.retryable && attempt < options.maxAttempts)
        )
      ),
      Effect.flatMap((body) =>
        Schema.decodeUnknownEffect(schema)(body).pipe(
          Effect.mapError(
            (cause) =>
              new CloudError({
                operation: call.operation,
                message: `ARC ${call.operation}: unexpected response: ${cause.message}`,
                retryable: false,
                cause
              })
          )
        )
      )
    )

  const allPages = <A>(
    operation: string,
    path: string,
    query: Record<string, string>,
    schema: typeof ListZonalShiftsResponse | typeof ListAutoshiftsResponse
  ): Effect.Effect<ReadonlyArray<A>, CloudError> =>
    Effect.gen(function* () {
      const items: Array<A> = []
      let nextToken: string | undefined
      for (let page = 0; page < 100; page++) {
        const res = yield* send(
          { operation, path, query: { ...query, ...(nextToken ? { nextToken } : {}) } },
          schema
        )
        items.push(...(res.items as ReadonlyArray<A>))
        nextToken = res.nextToken
        if (!nextToken) break
      }
      return items
    })

  return {
    getManagedResource: (resourceArn) =>
      send(
        {
          operation: "GetManagedResource",
          path: `/managedresources/${encodeURIComponent(resourceArn)}`,
          query: {}
        },
        GetManagedResourceResponse
      ),
    listActiveZonalShifts: (resourceArn) =>
      allPages<ZonalShiftSummary>(
        "ListZonalShifts",
        "/zonalshifts",
        { status: "ACTIVE", resourceIdentifier: resourceArn },
        ListZonalShiftsResponse
      ),
    listActiveAutoshifts: allPages<AutoshiftSummary>(
      "ListAutoshifts",
      "/autoshifts",
      { status: "ACTIVE" },
      ListAutoshiftsResponse
    )
  }
}

function arcError(operation: string, status: number, errorType: string | null, text: string): CloudError {
  const code = errorType?.split(":")[0] ?? `HTTP${status}`
  let detail = text.slice(0, 500)
  try {
    const body = Schema.decodeUnknownSync(ArcErrorBody)(JSON.parse(text))
    detail = body.message ?? body.Message ?? detail
  } catch {
    // not JSON: keep the raw text
  }
  return new CloudError({
    operation,
    message: `ARC ${operation} failed: ${code} (HTTP ${status}): ${detail}`,
    retryable: RETRYABLE_CODES.has(code) || status === 429 || status >= 500,
    cause: { code, status }
  })
}
