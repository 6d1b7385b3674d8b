/**
 * Reads the agent's YAML config file: YAML syntax, then the Schema (unknown keys rejected), then the
 * cross-field rules Schema cannot express (reason codes must be in the catalog and belong to the monitor
 * they are listed under; check names must exist). Every failure names the field.
 */
import { CATALOG, resolveReason, type CatalogEntry, type MonitorName } from "@nodemend/reason-codes"
import { Data, Effect, Result, Schema, SchemaIssue } from "effect"
import { readFile } from "node:fs/promises"
import { parse as parseYaml } from "yaml"
import { CHECKS } from "./check-names.ts"
import { AgentConfig } from "./schema.ts"

export class ConfigError extends Data.TaggedError("ConfigError")<{
  readonly path: string
  /** Dotted path of the offending field, e.g. `monitors.kernel.reasons.Foo`; empty for the whole file. */
  readonly field: string
  readonly detail: string
}> {
  override get message(): string {
    return `invalid config ${this.path}: ${this.field === "" ? "" : `${this.field}: `}${this.detail}`
  }
}

/** A reason key in config: an exact reason (`NvidiaXID79Error`) or a catalog template (`NvidiaXID{code}Error`). */
export const catalogEntryForKey = (key: string): CatalogEntry | undefined =>
  (CATALOG as readonly CatalogEntry[]).find((e) => e.code === key) ?? resolveReason(key)?.entry

const dotted = (path: ReadonlyArray<PropertyKey>): string => path.map(String).join(".")

/** Decodes an already-parsed YAML document. */
export const decodeConfig = (
  document: unknown,
  path = "<config>"
): Result.Result<AgentConfig, ConfigError> => {
  const decoded = Schema.decodeUnknownResult(AgentConfig)(document ?? {}, {
    errors: "all",
    onExcessProperty: "error"
  })
  if (Result.isFailure(decoded)) {
    const issues = SchemaIssue.makeFormatterStandardSchemaV1()(decoded.failure.issue).issues
    const first = issues[0]
    const field =
      first?.path === undefined ? "" : dotted(first.path.map((p) => (typeof p === "object" ? p.key : p)))
    const detail = issues
      .map(
        (i) =>
          `${i.path && i.path.length > 0 ? `${dotted(i.path.map((p) => (typeof p === "object" ? p.key : p)))}: ` : ""}${i.message}`
      )
      .join("; ")
    return Result.fail(
      new ConfigError({ path, field, detail: field === "" ? detail : detail.slice(field.length + 2) })
    )
  }
  const config = decoded.success
  for (const [monitor, settings] of Object.entries(config.monitors) as [
    MonitorName,
    { reasons: Record<string, unknown> }
  ][]) {
    for (const key of Object.keys(settings.reasons)) {
      const entry = catalogEntryForKey(key)
      const field = `monitors.${monitor}.reasons.${key}`
      if (entry === undefined)
        return Result.fail(new ConfigError({ path, field, detail: `unknown reason code "${key}"` }))
      if (entry.monitor !== monitor)
        return Result.fail(
          new ConfigError({
            path,
            field,
            detail: `reason "${key}" belongs to monitor "${entry.monitor}", not "${monitor}"`
          })
        )
    }
  }
  for (const name of Object.keys(config.checks)) {
    if (!Object.hasOwn(CHECKS, name))
      return Result.fail(
        new ConfigError({
          path,
          field: `checks.${name}`,
          detail: `unknown check; known: ${Object.keys(CHECKS).join(", ")}`
        })
      )
  }
  return Result.succeed(config)
}

export const parseConfigText = (text: string, path = "<config>"): Result.Result<AgentConfig, ConfigError> => {
  let document: unknown
  try {
    document = parseYaml(text, { strict: true, uniqueKeys: true })
  } catch (e) {
    return Result.fail(new ConfigError({ path, field: "", detail: `YAML: ${(e as Error).message}` }))
  }
  return decodeConfig(document, path)
}

/** Loads the config file; a missing path means "all defaults". */
export const loadConfig = (path: string | undefined): Effect.Effect<AgentConfig, ConfigError> =>
  path === undefined
    ? Effect.fromResult(decodeConfig({}))
    : Effect.tryPromise({
        try: () => readFile(path, "utf8"),
        catch: (e) => new ConfigError({ path, field: "", detail: `cannot read: ${(e as Error).message}` })
      }).pipe(Effect.flatMap((text) => Effect.fromResult(parseConfigText(text, path))))
