/**
 * A paginated list (`limit` + `continue`) that survives an expired continue token. The API server answers a
 * continue request with 410 Gone (reason Expired) once the token's resourceVersion has left its watch cache
 * and been compacted in etcd (a few minutes), so a list that pages slowly, or resumes after a stall, can
 * never finish from where it was. Like client-go's pager (which falls back to one full list on 410
 * ResourceExpired), it starts over from the first page, fresh: pages of an older snapshot are thrown away,
 * never mixed with pages of a newer one.
 */
import { Data, Effect } from "effect"
import { KubeError } from "./KubeError.ts"
import type { List } from "./types.ts"

/** Fresh restarts after an expired continue token before giving up (each one mints a new token). */
export const MAX_LIST_RESTARTS = 3

/** Every fresh restart of a paginated list also ran into an expired continue token. */
export class ListExpired extends Data.TaggedError("ListExpired")<{
  readonly operation: string
  readonly restarts: number
  readonly message: string
}> {}

/** A 410 on a page that carried a continue token: the token expired (not the first page's fault). */
const isExpiredContinue = (e: KubeError, cont: string | undefined): boolean =>
  cont !== undefined && e.code === 410

/** `&continue=<token>` for a path that already has a query, or nothing on the first page. */
export const continueParam = (cont: string | undefined): string =>
  cont === undefined ? "" : `&continue=${encodeURIComponent(cont)}`

/**
 * All items of a list, page by page. `fetchPage(undefined)` asks for the first page. `onRestart` runs before
 * each fresh start (the caller logs it).
 */
export const listAllPages = <T>(
  operation: string,
  fetchPage: (cont: string | undefined) => Effect.Effect<List<T>, KubeError>,
  onRestart: (restart: number, error: KubeError) => Effect.Effect<void> = () => Effect.void,
  maxRestarts: number = MAX_LIST_RESTARTS
): Effect.Effect<ReadonlyArray<T>, KubeError | ListExpired> =>
  Effect.gen(function* () {
    for (let restart = 0; ; restart++) {
      const out: T[] = []
      let cont: string | undefined
      let expired: KubeError | undefined
      do {
        const page: List<T> | KubeError = yield* fetchPage(cont).pipe(
          Effect.catchTag("KubeError", (e) =>
            isExpiredContinue(e, cont) ? Effect.succeed(e) : Effect.fail(e)
          )
        )
        if (page instanceof KubeError) {
          expired = page
          break
        }
        out.push(...page.items)
        cont = page.metadata?.continue || undefined
      } while (cont !== undefined)
      if (expired === undefined) return out as ReadonlyArray<T>
      if (restart >= maxRestarts)
        return yield* new ListExpired({
          operation,
          restarts: restart,
          message: `${operation}: continue token expired on the first attempt and on ${restart} fresh restarts (${expired.message})`
        })
      yield* onRestart(restart + 1, expired)
    }
  })
