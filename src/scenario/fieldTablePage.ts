/** The markers around the generated field table in docs/scenarios.md. */
export const FIELD_TABLE_START = '<!-- field table: written by npm run docs:fields from src/scenario/schema.ts -->';
export const FIELD_TABLE_END = '<!-- end of field table -->';

/** What the table is, above it. */
const FIELD_TABLE_INTRO =
  'Every field the schema takes, with what it takes and its default (no default: optional, or derived from the rest, ' +
  'as the annotated scenario above says; `training.globalBatch` is required). Sizes in MB are MiB.';

/** The text of a page between two marker comments, trimmed; undefined when the page lacks them. */
export function markedBlockOf(page: string, startMarker: string, endMarker: string): string | undefined {
  const start = page.indexOf(startMarker);
  const end = page.indexOf(endMarker);
  return start < 0 || end < start ? undefined : page.slice(start + startMarker.length, end).trim();
}

/** The page with `text` between two marker comments; undefined when the page lacks them. */
export function withMarkedBlock(
  page: string,
  startMarker: string,
  endMarker: string,
  text: string,
): string | undefined {
  const start = page.indexOf(startMarker);
  const end = page.indexOf(endMarker);
  if (start < 0 || end < start) return undefined;
  return `${page.slice(0, start)}${startMarker}\n${text}\n${page.slice(end)}`;
}

/** The page with `table` between the markers (added at the end, under a heading, when the page has none). */
export function withFieldTable(page: string, table: string): string {
  const block = `${FIELD_TABLE_START}\n${table}\n${FIELD_TABLE_END}`;
  return (
    withMarkedBlock(page, FIELD_TABLE_START, FIELD_TABLE_END, table) ??
    `${page.trimEnd()}\n\n## Every field\n\n${FIELD_TABLE_INTRO}\n\n${block}\n`
  );
}

/** The table between the markers, or undefined when the page has none. */
export function fieldTableOf(page: string): string | undefined {
  return markedBlockOf(page, FIELD_TABLE_START, FIELD_TABLE_END);
}
