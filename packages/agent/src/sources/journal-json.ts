/**
 * The four fields the journal reader uses (`__CURSOR`, `SYSLOG_IDENTIFIER`, `MESSAGE`, `__REALTIME_TIMESTAMP`) from one
 * line of `journalctl --output=json`, without `JSON.parse` of the whole record.
 *
 * Why: V8's JSON.parse internalizes every one-byte string value shorter than 10 characters, and internalized strings
 * are made in the old generation, where they stay until the next mark-compact. A journal record carries such values
 * that differ in every record (`__MONOTONIC_TIMESTAMP` in a boot's first ~17 minutes, `__SEQNUM` from systemd 254
 * on, `_PID`, `SYSLOG_PID`, ...): one more old-generation string per entry. The reader alone (DaemonSet flags,
 * 200,000 entries) peaked 8-9 MiB above its start with JSON.parse and did one mark-compact, and at +0 without; the
 * agent in a 1-20% journal storm peaked at 92-111 MiB, 68-70 without.
 *
 * Here one regular expression checks that the line is a flat object of string and null values (what journalctl
 * prints), and each of the four is found by its `"NAME":` text: a value without escapes is its text, one with
 * escapes is JSON.parse of the value alone. Nothing else of the record is made.
 *
 * A line of another shape (a key with an escape, a value that is not a string or null, whitespace, anything but one
 * object, a line over 64 KiB) is left to the caller (`undefined`), who parses it whole: the fields are JSON.parse's
 * in every case, this is only its fast path. Arrays (a field journalctl prints as bytes, a repeated field) take the
 * whole parse.
 */

/** The raw JSON values of the fields the reader uses (as JSON.parse gives them); an absent field is undefined. */
export interface JournalFields {
  cursor: unknown
  identifier: unknown
  message: unknown
  realtime: unknown
}

/**
 * A JSON string (quotes included), "unrolled" (runs of plain characters between escapes) so that a string without
 * its closing quote fails in linear time.
 */
const STRING = String.raw`"[^"\\\u0000-\u001f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\u0000-\u001f]*)*"`
/** A key without escapes, its colon and its value: a string or null (no whitespace: journalctl prints none). */
const MEMBER = String.raw`"[^"\\\u0000-\u001f]*":(?:${STRING}|null)`
/** The whole line: one object of such members. Unambiguous (each further member after a comma): linear. */
const SHAPE = new RegExp(`^\\{(?:${MEMBER}(?:,${MEMBER})*)?\\}$`)

/**
 * Longer lines are parsed whole: a string's escapes each take a place on the regular expression's backtrack stack,
 * and a long line full of them would grow it (journalctl's lines are a few hundred bytes; the reader cuts at 1 MiB).
 */
const MAX_FAST_LINE = 64 * 1024

/** Where the string whose opening quote is at `from` closes: the first quote after it not escaped. */
const closingQuote = (line: string, from: number): number => {
  for (let q = line.indexOf('"', from + 1); ; q = line.indexOf('"', q + 1)) {
    let b = q - 1
    while (line.charCodeAt(b) === 92) b--
    if ((q - 1 - b) % 2 === 0) return q
  }
}

/**
 * The value of the member `key` (`"NAME":`), the last one as JSON.parse keeps the last. Once SHAPE held, `"NAME":`
 * occurs only where that member begins: inside a string every quote is escaped, so the quote after NAME would end it.
 */
const memberValue = (line: string, key: string): unknown => {
  const k = line.lastIndexOf(key)
  if (k === -1) return undefined
  const at = k + key.length
  if (line.charCodeAt(at) !== 34) return null
  const end = closingQuote(line, at)
  const backslash = line.indexOf("\\", at)
  // Without escapes a string is its text (a slice, as every other source's lines are); with them, JSON.parse's.
  return backslash === -1 || backslash > end ? line.slice(at + 1, end) : JSON.parse(line.slice(at, end + 1))
}

/** The fields of one journalctl JSON line, or undefined when the line is not of the shape journalctl prints. */
export const readJournalFields = (line: string): JournalFields | undefined =>
  line.length <= MAX_FAST_LINE && SHAPE.test(line)
    ? {
        cursor: memberValue(line, '"__CURSOR":'),
        identifier: memberValue(line, '"SYSLOG_IDENTIFIER":'),
        message: memberValue(line, '"MESSAGE":'),
        realtime: memberValue(line, '"__REALTIME_TIMESTAMP":')
      }
    : undefined

/**
 * The fields of a line parsed whole: for the lines readJournalFields leaves, and what it must equal where it does not
 * (its property tests). Undefined if the line is not JSON; JSON that is not an object has none of the fields.
 */
export const parseJournalFields = (line: string): JournalFields | undefined => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  const entry = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>
  return {
    cursor: entry.__CURSOR,
    identifier: entry.SYSLOG_IDENTIFIER,
    message: entry.MESSAGE,
    realtime: entry.__REALTIME_TIMESTAMP
  }
}
