/** The markers around the generated field table in docs/scenarios.md. */
export const FIELD_TABLE_START = '<!-- field table: written by npm run docs:fields from src/scenario/schema.ts -->';
export const FIELD_TABLE_END = '<!-- end of field table -->';

/** What the table is, above it. */
const FIELD_TABLE_INTRO =
  'Every field the schema takes, with what it takes and its default (no default: optional, or derived from the rest, as the annotated scenario above says; `training.globalBatch` is required). Sizes in MB are MiB.';

/** The page with `table` between the markers (added at the end, under a heading, when the page has none). */
export function withFieldTable(page: string, table: string): string {
  const block = `${FIELD_TABLE_START}\n${table}\n${FIELD_TABLE_END}`;
  const start = page.indexOf(FIELD_TABLE_START);
  const end = page.indexOf(FIELD_TABLE_END);
  if (start < 0 || end < start) return `${page.trimEnd()}\n\n## Every field\n\n${FIELD_TABLE_INTRO}\n\n${block}\n`;
  return page.slice(0, start) + block + page.slice(end + FIELD_TABLE_END.length);
}

/** The table between the markers, or undefined when the page has none. */
export function fieldTableOf(page: string): string | undefined {
  const start = page.indexOf(FIELD_TABLE_START);
  const end = page.indexOf(FIELD_TABLE_END);
  return start < 0 || end < start ? undefined : page.slice(start + FIELD_TABLE_START.length, end).trim();
}
