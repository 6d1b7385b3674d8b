/**
 * List (paged), then watch from the list's resourceVersion, for ever: the watch asks for bookmarks, resumes
 * from the last resourceVersion it saw (events and bookmarks), relists when the server answers 410 Gone (the
 * version was compacted away, as an HTTP status, an ERROR event or an expired continue token), and pauses
 * after failures as the caller's backoff says, so a missing CRD or RBAC costs one request a minute, not a hot
 * loop. The agent's NodeDiagnostic watch and the repair controller's Node informer both run on it.
 */
import { Duration, Effect, Schema } from "effect"
import { type KubeError, transportKubeError } from "./KubeError.ts"
import type { KubeHttp } from "./KubeHttp.ts"
import { continueParam } from "./PagedList.ts"

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED"

/** One line of a watch stream. ERROR carries a Status; BOOKMARK only `metadata.resourceVersion`. */
const WatchEvent = Schema.Struct({
  type: Schema.Literals(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]),
  object: Schema.Struct({
    metadata: Schema.optionalKey(Schema.Struct({ resourceVersion: Schema.optionalKey(Schema.String) })),
    code: Schema.optionalKey(Schema.Number)
  })
})
const decodeWatchEvent = Schema.decodeUnknownOption(WatchEvent)

const ListPage = Schema.Struct({
  metadata: Schema.Struct({ resourceVersion: Schema.String, continue: Schema.optionalKey(Schema.String) }),
  items: Schema.Array(Schema.Unknown)
})
const decodeListPage = Schema.decodeUnknownOption(ListPage)

/** How one list or watch attempt ended. */
export type WatchEnd =
  | { readonly _tag: "Ended" }
  | { readonly _tag: "Expired" }
  | { readonly _tag: "HttpError"; readonly code: number }
  | { readonly _tag: "NetworkError" }

export const watchEndOf = (e: KubeError): WatchEnd =>
  e.code === 410
    ? { _tag: "Expired" }
    : e.code === undefined
      ? { _tag: "NetworkError" }
      : { _tag: "HttpError", code: e.code }

/**
 * The default pause before the next attempt. None after the server's normal end of a watch or a 410 (relist
 * at once); after HTTP errors (no CRD installed yet: 404, no RBAC: 403) 1 s doubling up to 1 minute, so a CRD
 * installed just after start is seen at once; 2 s after network errors. `failures` counts consecutive HTTP
 * errors.
 */
export const watchBackoff = (end: WatchEnd, failures: number): Duration.Duration => {
  switch (end._tag) {
    case "Ended":
    case "Expired":
      return Duration.zero
    case "HttpError":
      return Duration.seconds(Math.min(60, 2 ** Math.max(0, failures - 1)))
    case "NetworkError":
      return Duration.seconds(2)
  }
}

export interface ListWatchOptions {
  readonly http: KubeHttp
  /** Collection path, e.g. `/apis/nodemend.io/v1alpha1/nodediagnostics`. */
  readonly path: string
  /** Extra query parameters for both the list and the watch (fieldSelector, labelSelector). */
  readonly query: Readonly<Record<string, string>>
  /** Every listed object (after each (re)list, page by page) and every watch event. */
  readonly onObject: (type: WatchEventType | "LISTED", object: unknown) => void
  /** Before the first page of each (re)list. */
  readonly onListStart?: () => void
  /** After the last page of each (re)list: every object that exists was LISTED since onListStart. */
  readonly onSynced?: () => void
  /** Start watching from this resourceVersion instead of listing first. */
  readonly resourceVersion?: string
  /** Server-side end of one watch request (the server sends a bookmark shortly before). Default 300 s. */
  readonly timeoutSeconds?: number | (() => number)
  /** Objects per list page. Default 500 (client-go's pager). */
  readonly pageSize?: number
  /** Pause before the next attempt; default `watchBackoff`. */
  readonly backoff?: (end: WatchEnd, failures: number) => Duration.Duration
  /** Told of every attempt that did not end normally (for a log line). */
  readonly onFailure?: (end: WatchEnd, pause: Duration.Duration, detail: string) => Effect.Effect<void>
}

const query = (base: Readonly<Record<string, string>>, extra: Record<string, string>) =>
  `?${new URLSearchParams({ ...base, ...extra }).toString()}`

/**
 * One full list, page by page, through `onObject("LISTED")`; its resourceVersion. An unreadable answer is a
 * network-like failure (retried after the network pause).
 */
export const listOnce = (
  options: Pick<
    ListWatchOptions,
    "http" | "path" | "query" | "onObject" | "onListStart" | "onSynced" | "pageSize"
  >
): Effect.Effect<string, KubeError> =>
  Effect.gen(function* () {
    const { http, path, onObject } = options
    const limit = String(options.pageSize ?? 500)
    options.onListStart?.()
    let cont: string | undefined
    let resourceVersion: string | undefined
    do {
      const raw = yield* http.call(
        `list ${path}`,
        "GET",
        `${path}${query(options.query, { limit })}${continueParam(cont)}`
      )
      const page = decodeListPage(raw)
      if (page._tag === "None")
        return yield* Effect.fail(transportKubeError(`list ${path}`, "the answer is not a list"))
      resourceVersion ??= page.value.metadata.resourceVersion
      for (const item of page.value.items) onObject("LISTED", item)
      cont = page.value.metadata.continue || undefined
    } while (cont !== undefined)
    options.onSynced?.()
    return resourceVersion
  })

export const listWatch = (options: ListWatchOptions): Effect.Effect<never> =>
  Effect.gen(function* () {
    const { http, path, onObject } = options
    const backoff = options.backoff ?? watchBackoff
    let resourceVersion: string | undefined = options.resourceVersion
    let failures = 0

    const list = listOnce(options).pipe(
      Effect.map((rv): WatchEnd => {
        resourceVersion = rv
        return { _tag: "Ended" }
      })
    )
    const watch = (from: string) => {
      const timeoutSeconds =
        typeof options.timeoutSeconds === "function"
          ? options.timeoutSeconds()
          : (options.timeoutSeconds ?? 300)
      // Bookmarks arrive about once a minute and just before timeoutSeconds: silence past that is a dead link.
      const idleMs = Math.min(timeoutSeconds, 60) * 1000 + 30_000
      let expired = false
      // Any other ERROR event (e.g. 504 "Too large resource version" after an etcd restore) ends the watch too;
      // re-watching from the same version at once would loop hot, so it backs off like an HTTP error.
      let errorCode: number | undefined
      return http
        .watch(
          `watch ${path}`,
          `${path}${query(options.query, {
            watch: "1",
            resourceVersion: from,
            allowWatchBookmarks: "true",
            timeoutSeconds: String(timeoutSeconds)
          })}`,
          (line) => {
            const event = decodeWatchEvent(line)
            if (event._tag === "None") return
            const { type, object } = event.value
            if (type === "ERROR") {
              if (object.code === 410) expired = true
              else errorCode = object.code ?? 500
              return
            }
            resourceVersion = object.metadata?.resourceVersion ?? resourceVersion
            if (type !== "BOOKMARK") onObject(type, (line as { object: unknown }).object)
          },
          idleMs
        )
        .pipe(
          Effect.map(
            (): WatchEnd =>
              expired
                ? { _tag: "Expired" }
                : errorCode !== undefined
                  ? { _tag: "HttpError", code: errorCode }
                  : { _tag: "Ended" }
          )
        )
    }

    return yield* Effect.suspend(() => (resourceVersion === undefined ? list : watch(resourceVersion))).pipe(
      Effect.map((end) => ({ end, detail: end._tag === "HttpError" ? `ERROR event ${end.code}` : "" })),
      Effect.catch((e: KubeError) => Effect.succeed({ end: watchEndOf(e), detail: e.message })),
      Effect.flatMap(({ end, detail }) => {
        if (end._tag === "Expired") resourceVersion = undefined
        failures = end._tag === "HttpError" ? failures + 1 : 0
        const pause = backoff(end, failures)
        const told =
          end._tag === "HttpError" || end._tag === "NetworkError"
            ? (options.onFailure?.(end, pause, detail) ?? Effect.void)
            : Effect.void
        return told.pipe(Effect.andThen(Duration.isZero(pause) ? Effect.void : Effect.sleep(pause)))
      }),
      Effect.forever
    )
  })
