/**
 * Where a line comes from: a source id names a log reader and what it reads (`READER` or `READER:ARGUMENT`).
 * The readers are registered by these names in sources/log-readers.ts (the typechecker holds the two lists
 * equal); the rules' schema and `rules check` read source ids through `parseSourceId`, so an id naming no
 * reader is refused, naming the readers there are.
 */

/**
 * The readers and the argument each takes. `dmesg` is the kernel ring buffer (<host>/dev/kmsg); `journal:IDENT` is
 * the journald entries whose SYSLOG_IDENTIFIER is IDENT; `file:PATH` is a plain file under the host root;
 * `podlogs:NAME` is every container log file of the kube-system pods named NAME-* under /var/log/pods.
 */
export const LOG_READER_FORMS = {
  dmesg: { argument: "none", form: "dmesg" },
  journal: { argument: "name", form: "journal:IDENT" },
  file: { argument: "absolute-path", form: "file:/ABSOLUTE/PATH" },
  podlogs: { argument: "name", form: "podlogs:NAME" }
} as const satisfies Record<
  string,
  { readonly argument: "none" | "name" | "absolute-path"; readonly form: string }
>

export type LogReaderName = keyof typeof LOG_READER_FORMS

type ReaderWith<Kind> = {
  [Name in LogReaderName]: (typeof LOG_READER_FORMS)[Name]["argument"] extends Kind ? Name : never
}[LogReaderName]

/** `dmesg`, `journal:${string}`, `file:${string}`, `podlogs:${string}`: from the table, so a new reader adds its ids. */
export type LogSourceId = ReaderWith<"none"> | `${ReaderWith<"name" | "absolute-path">}:${string}`

export const LOG_READER_NAMES = Object.keys(LOG_READER_FORMS) as readonly LogReaderName[]

/** The forms of every reader's source ids, for messages (`dmesg, journal:IDENT, ...`). */
export const SOURCE_FORMS = LOG_READER_NAMES.map((n) => LOG_READER_FORMS[n].form).join(", ")

export type ParsedSourceId =
  | { readonly _tag: "Parsed"; readonly reader: LogReaderName; readonly argument: string }
  | { readonly _tag: "Refused"; readonly message: string }

const isReader = (name: string): name is LogReaderName => Object.hasOwn(LOG_READER_FORMS, name)

/** Splits a source id into its reader and argument, or says why it names no reader's source. */
export const parseSourceId = (id: string): ParsedSourceId => {
  const colon = id.indexOf(":")
  const name = colon < 0 ? id : id.slice(0, colon)
  const argument = colon < 0 ? "" : id.slice(colon + 1)
  if (!isReader(name))
    return {
      _tag: "Refused",
      message: `unknown log reader "${name}" in "${id}": the readers are ${SOURCE_FORMS}`
    }
  const { argument: kind, form } = LOG_READER_FORMS[name]
  const fits =
    /^\S*$/u.test(argument) &&
    (kind === "none" ? colon < 0 : kind === "name" ? argument.length > 0 : argument.startsWith("/"))
  return fits
    ? { _tag: "Parsed", reader: name, argument }
    : { _tag: "Refused", message: `"${id}" is not a ${name} source: expected ${form}` }
}
