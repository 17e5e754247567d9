/** Pads cells into aligned columns; numbers right-aligned, text left-aligned. */
export function table(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, c) => Math.max(...cells.map((r) => (r[c] ?? '').length)));
  const numeric = header.map(
    (_, c) => rows.length > 0 && rows.every((r) => typeof r[c] === 'number' || /^[-\d.,]+(\s?%)?$/.test(String(r[c]))),
  );
  return cells
    .map((r) =>
      r
        .map((cell, c) => (numeric[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
