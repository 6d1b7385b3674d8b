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
  const c1 = raw.indexOf(",")
  const c2 = c1 < 0 ? -1 : raw.indexOf(",", c1 + 1)
  if (c1 < 0 || c2 < 0 || c2 > semi) return undefined
  const c3 = raw.indexOf(",", c2 + 1)
  const usecEnd = c3 < 0 || c3 > semi ? semi : c3
  const prio = toNat(raw, 0, c1)
  const seq = toNat(raw, c1 + 1, c2)
  const usec = toNat(raw, c2 + 1, usecEnd)
  if (prio < 0 || seq < 0 || usec < 0) return undefined
  let flags = "-"
  if (usecEnd !== semi) {
    const c4 = raw.indexOf(",", usecEnd + 1)
    flags = raw.slice(usecEnd + 1, c4 < 0 || c4 > semi ? semi : c4)
  }
  const nl = raw.indexOf("\n", semi)
  const dictionary: Record<string, string> = {}
  if (nl >= 0) {
    const lines = raw.slice(nl + 1).split("\n")
    for (const line of lines) {
      if (!line.startsWith(" ")) continue
      const eq = line.indexOf("=")
      if (eq > 1) dictionary[line.slice(1, eq)] = unescapeKmsg(line.slice(eq + 1))
    }
  }
  return {
    level: prio & 7,
    facility: prio >> 3,
    seq,
    usecSinceBoot: usec,
    flags,
    text: unescapeKmsg(nl < 0 ? raw.slice(semi + 1) : raw.slice(semi + 1, nl)),
    dictionary
  }
}

/** Decimal digits in [from, to) as a number; -1 when empty or not all digits. */
const toNat = (s: string, from: number, to: number): number => {
  if (to <= from || to - from > 16) return -1
  let n = 0
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}
