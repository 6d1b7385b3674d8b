/** Plain-text table like kubectl's: upper-case headers, columns padded by three spaces. Pure. */
export const renderTable = (
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>
): string => {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("   ")
      .trimEnd()
  return [line(headers), ...rows.map(line)].join("\n")
}
