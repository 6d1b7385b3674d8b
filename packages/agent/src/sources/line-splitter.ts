/**
 * Splits a byte stream into lines with a bounded carry-over: a line longer than `maxLineBytes` (counted in
 * UTF-16 units) is cut, its head delivered and the cut counted, so a writer that never prints a newline
 * cannot grow memory.
 */
import { StringDecoder } from "node:string_decoder"

export const MAX_LINE_BYTES = 64 * 1024

export interface LineSplitter {
  readonly push: (chunk: Buffer) => void
  /** Delivers a trailing partial line (at EOF of a rotated file). */
  readonly flush: () => void
}

export const makeLineSplitter = (
  onLine: (line: string) => void,
  onTruncated: () => void,
  maxLineBytes: number = MAX_LINE_BYTES
): LineSplitter => {
  const decoder = new StringDecoder("utf8")
  let carry = ""
  let discarding = false
  const push = (chunk: Buffer) => {
    const text = carry + decoder.write(chunk)
    let start = 0
    for (let nl = text.indexOf("\n", start); nl !== -1; nl = text.indexOf("\n", start)) {
      if (!discarding) {
        const line = text.slice(start, nl).replace(/\r$/, "")
        if (line.length > maxLineBytes) {
          onLine(line.slice(0, maxLineBytes))
          onTruncated()
        } else onLine(line)
      }
      discarding = false
      start = nl + 1
    }
    carry = text.slice(start)
    if (carry.length > maxLineBytes) {
      if (!discarding) {
        onLine(carry.slice(0, maxLineBytes))
        onTruncated()
      }
      discarding = true
      carry = ""
    }
  }
  const flush = () => {
    const rest = carry + decoder.end()
    carry = ""
    if (rest.length > 0 && !discarding) onLine(rest)
    discarding = false
  }
  return { push, flush }
}
