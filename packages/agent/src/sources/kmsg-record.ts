/**
 * /dev/kmsg records (Documentation/ABI/testing/dev-kmsg):
 *   `prio,seq,usec,flags[,more];text\n` then optional continuation lines ` KEY=VALUE\n`.
 * `prio` holds facility << 3 | level; `usec` is CLOCK_MONOTONIC at the time of logging; non-printable
 * bytes of the text and of dictionary values are escaped as `\xNN`.
 */
export interface KmsgRecord {
  readonly level: number
  readonly facility: number
  readonly seq: number
  readonly usecSinceBoot: number
  /** `-` normal, `c` continuation of a previous record (fragment), `+` continued by the next. */
  readonly flags: string
  readonly text: string
  readonly dictionary: Readonly<Record<string, string>>
}

/**
 * The kernel escapes every byte < 0x20 or >= 0x7f (and the backslash) as `\xNN`, so a record is ASCII:
 * map escapes to bytes, then decode the bytes as UTF-8.
 */
const unescapeKmsg = (s: string): string =>
  s.includes("\\x")
    ? Buffer.from(
        s.replace(/\\x([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
        "latin1"
      ).toString("utf8")
    : s

/** Parses one record (the header line plus continuation lines, as one read() returns it). */
export const parseKmsgRecord = (raw: string): KmsgRecord | undefined => {
  const semi = raw.indexOf(";")
  if (semi < 0) return undefined
  const header = raw.slice(0, semi).split(",")
  if (header.length < 3) return undefined
  const prio = Number(header[0])
  const seq = Number(header[1])
  const usec = Number(header[2])
  if (!Number.isInteger(prio) || !Number.isInteger(seq) || !Number.isFinite(usec) || prio < 0 || seq < 0)
    return undefined
  const body = raw.slice(semi + 1)
  const lines = body.split("\n")
  const dictionary: Record<string, string> = {}
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!
    if (!line.startsWith(" ")) continue
    const eq = line.indexOf("=")
    if (eq > 1) dictionary[line.slice(1, eq)] = unescapeKmsg(line.slice(eq + 1))
  }
  return {
    level: prio & 7,
    facility: prio >> 3,
    seq,
    usecSinceBoot: usec,
    flags: header[3] ?? "-",
    text: unescapeKmsg(lines[0]!),
    dictionary
  }
}
