import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scenarioSchema } from '../../src/scenario/schema.js';
import { numberText, schemaFields, schemaFieldTable, takesWords } from '../../src/scenario/schemaFields.js';
import { fieldTableOf, withFieldTable } from '../../src/scenario/fieldTablePage.js';

describe("docs/scenarios.md's field table", () => {
  const fields = schemaFields(scenarioSchema);

  it('is the one the schema gives (npm run docs:fields writes it)', () => {
    expect(fieldTableOf(readFileSync('docs/scenarios.md', 'utf8'))).toBe(schemaFieldTable(fields));
  });

  it('lists each field once, with what it takes and its default as the schema says', () => {
    const paths = fields.map((f) => f.path);
    expect(new Set(paths).size).toBe(paths.length);
    const of = (path: string) => fields.find((f) => f.path === path);
    expect(of('parallel.schedule')).toEqual({
      path: 'parallel.schedule',
      takes: 'gpipe | 1f1b | interleaved',
      default: '1f1b',
    });
    expect(of('training.globalBatch')).toEqual({ path: 'training.globalBatch', takes: 'integer > 0' });
    // Defaults as a scenario would write them (YAML reads 100,000 as text).
    expect(of('parallel.zeroConfig.prefetchBucketElements')?.default).toBe('5e7');
    expect(of('parallel.zeroConfig.persistenceThresholdElements')?.default).toBe('1e5');
    // A preset name or an inline mapping: the name and then each field of the mapping.
    expect(of('cluster.gpu')?.takes).toBe('text, or a mapping of the fields below');
    expect(of('cluster.gpu.memoryGiB')?.takes).toBe('number, 0.1 to 100,000');
    // Every top-level section of the scenario has fields in the table.
    for (const section of ['cluster', 'model', 'training', 'parallel', 'comm', 'noise', 'simulation'])
      expect(
        paths.some((p) => p.startsWith(`${section}.`)),
        section,
      ).toBe(true);
  });

  it('words numbers and their bounds as a reader writes them', () => {
    expect(numberText(5e7)).toBe('5e7');
    expect(numberText(100000)).toBe('100,000');
    expect(numberText(12345)).toBe('12,345');
    expect(numberText(0.5)).toBe('0.5');
    expect(takesWords(z.number().int().positive())).toBe('integer > 0');
    expect(takesWords(z.number().gt(0).lte(1))).toBe('number > 0 ≤ 1');
    expect(takesWords(z.array(z.enum(['a', 'b'])).optional())).toBe('list of a | b');
  });

  it('replaces the table between its markers and keeps the rest of the page', () => {
    const page = withFieldTable('# Title\n\ntext\n', '| a |');
    expect(fieldTableOf(page)).toBe('| a |');
    const again = withFieldTable(page, '| b |');
    expect(fieldTableOf(again)).toBe('| b |');
    expect(again.startsWith('# Title\n\ntext\n')).toBe(true);
    expect(again.split('## Every field').length).toBe(2);
  });
});
