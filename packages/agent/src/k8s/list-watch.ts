/**
 * List, then watch from the list's resourceVersion, for ever: the watch resumes from the last
 * resourceVersion it saw (events and bookmarks), relists when the server answers 410 Gone (the version
 * was compacted away), and waits a bounded, growing pause after errors so a missing CRD or RBAC costs one
 * request a minute, not a hot loop.
 */
import { Duration, Effect, Schema } from "effect"
import type { KubeError, KubeHttp } from "./kube-http.ts"

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

const List = Schema.Struct({
  metadata: Schema.Struct({ resourceVersion: Schema.String }),
  items: Schema.Array(Schema.Unknown)
})
const decodeList = Schema.decodeUnknownOption(List)

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
 * Pause before the next attempt. None after the server's normal end of a watch or a 410 (relist at once);
 * after HTTP errors (no CRD installed yet: 404, no RBAC: 403) 1 s doubling up to 1 minute, so a CRD
 * installed just after the agent is seen at once; 2 s after network errors. `failures` counts consecutive
 * HTTP errors.
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
  /** Every listed object (after each (re)list) and every watch event. Runs on the watch's callback. */
  readonly onObject: (type: WatchEventType | "LISTED", object: unknown) => void
  /** Start watching from this resourceVersion instead of listing first. */
  readonly resourceVersion?: string
  /** Server-side end of one watch request; the server sends a bookmark shortly before. Default 5 min. */
  readonly timeoutSeconds?: number
}

export const listWatch = (options: ListWatchOptions): Effect.Effect<never> =>
  Effect.gen(function* () {
    const { http, path, onObject } = options
    const timeoutSeconds = options.timeoutSeconds ?? 300
    // Bookmarks arrive about once a minute and just before timeoutSeconds: silence past that is a dead link.
    const idleMs = Math.min(timeoutSeconds, 60) * 1000 + 30_000
    const query = (extra: Record<string, string>) =>
      `?${new URLSearchParams({ ...options.query, ...extra }).toString()}`
    let resourceVersion: string | undefined = options.resourceVersion
    let failures = 0

    const list = http.call(`list ${path}`, "GET", `${path}${query({})}`).pipe(
      Effect.flatMap((raw) => {
        const decoded = decodeList(raw)
        if (decoded._tag === "None") return Effect.succeed<WatchEnd>({ _tag: "NetworkError" })
        resourceVersion = decoded.value.metadata.resourceVersion
        for (const item of decoded.value.items) onObject("LISTED", item)
        return Effect.succeed<WatchEnd>({ _tag: "Ended" })
      })
    )
    const watch = (from: string) => {
      let expired = false
      // Any other ERROR event (e.g. 504 "Too large resource version" after an etcd restore) ends the watch too;
      // re-watching from the same version at once would loop hot, so it backs off like an HTTP error.
      let errorCode: number | undefined
      return http
        .watch(
          `watch ${path}`,
          `${path}${query({
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
      Effect.catch((e: KubeError) => Effect.succeed(watchEndOf(e))),
      Effect.flatMap((end) => {
        if (end._tag === "Expired") resourceVersion = undefined
        failures = end._tag === "HttpError" ? failures + 1 : 0
        const pause = watchBackoff(end, failures)
        return Duration.isZero(pause) ? Effect.void : Effect.sleep(pause)
      }),
      Effect.forever
    )
  })
