/** What every admin route answers with: a reply, an error with its status, and a checked request body. */
import { Schema } from "effect"

export interface AdminReply {
  readonly status: number
  readonly body: unknown
}

export class AdminError extends Error {
  readonly status: number
  constructor(message: string, status = 400) {
    super(message)
    this.status = status
  }
}

export function decode<S extends Schema.Top & { readonly DecodingServices: never }>(
  schema: S,
  body: string
): S["Type"] {
  try {
    return Schema.decodeUnknownSync(schema)(body === "" ? {} : JSON.parse(body))
  } catch (e) {
    throw new AdminError(`bad request body: ${e instanceof Error ? e.message : String(e)}`)
  }
}
