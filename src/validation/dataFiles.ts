import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A file of the validation data (test/validation/), as a path. */
export const dataFile = (name: string) => fileURLToPath(new URL(`../../test/validation/${name}`, import.meta.url));

/** A data file's rows as records by header name; `#` lines (its source) and blank lines are skipped. */
export function csvRecords(name: string): Record<string, string>[] {
  const lines = readFileSync(dataFile(name), 'utf8')
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
  const header = lines[0].split(',');
  return lines.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [header[i], v])));
}
