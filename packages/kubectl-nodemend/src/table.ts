/**
 * Plain-text table like kubectl's: upper-case headers, columns padded by three spaces. Cells hold cluster text,
 * so each is made terminal-safe (one line, no control characters) before it is measured. Pure.
 */
import { terminalSafe } from "./terminalSafe.ts"

export const renderTable = (
  headers: ReadonlyArray<string>,
  cells: ReadonlyArray<ReadonlyArray<string>>
): string => {
  const rows = cells.map((r) => r.map(terminalSafe))
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (row: ReadonlyArray<string>) =>
    row
      .map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("   ")
      .trimEnd()
  return [line(headers), ...rows.map(line)].join("\n")
}
