import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scenarioSchema } from '../../src/scenario/schema.js';
import { schemaFields } from '../../src/scenario/schemaFields.js';
import { presetSourcesOf, presetSourcesTable } from '../../src/cli/presetSourcesTable.js';
import { gpuPresetNames, networkPresetNames, nodePresetNames } from '../../src/sim/hardware/presets.js';

const page = readFileSync('docs/hardware.md', 'utf8');

/** The field paths the reference table of docs/hardware.md names, `a.b.fp32 … .fp8` read as the five dtypes. */
function documentedPaths(): Set<string> {
  const start = page.indexOf('<!-- cluster field reference');
  const end = page.indexOf('<!-- end of cluster field reference -->');
  const paths = new Set<string>();
  for (const line of page.slice(start, end).split('\n')) {
    const m = /^\| `([^`]+)`(?: … `\.fp8`)? \|/.exec(line);
    if (!m) continue;
    if (!line.includes('… `.fp8`')) paths.add(m[1]);
    else for (const d of ['fp32', 'tf32', 'fp16', 'bf16', 'fp8']) paths.add(m[1].replace(/fp32$/, d));
  }
  return paths;
}

describe('docs/hardware.md', () => {
  it('documents every cluster field the schema takes, with its unit and what it changes, and no other', () => {
    const schema = schemaFields(scenarioSchema)
      .map((f) => f.path)
      .filter((p) => p.startsWith('cluster.'));
    expect([...documentedPaths()].sort()).toEqual(schema.sort());
  });

  it('lists what every preset rests on, as the presets give it (npm run docs:fields writes it)', () => {
    expect(presetSourcesOf(page)).toBe(presetSourcesTable());
    for (const name of [...gpuPresetNames(), ...nodePresetNames(), ...networkPresetNames()])
      expect(page).toContain(`\`${name}\``);
  });
});
