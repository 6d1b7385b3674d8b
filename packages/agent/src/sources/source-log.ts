/** How readers (plain Node callbacks) report what they cannot put in a record: into the Effect logger. */
export type SourceLog = (
  level: "info" | "warn" | "error",
  message: string,
  fields?: Readonly<Record<string, unknown>>
) => void
