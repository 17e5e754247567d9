// Writes the field table of docs/scenarios.md from the scenario schema, and the preset sources of docs/hardware.md
// (after `npm run build`): npm run docs:fields. test/docs fails when a page and the code disagree.
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../dist/atomicWrite.js';
import { scenarioSchema } from '../dist/scenario/schema.js';
import { schemaFields, schemaFieldTable } from '../dist/scenario/schemaFields.js';
import { withFieldTable } from '../dist/scenario/fieldTablePage.js';

const page = 'docs/scenarios.md';
writeFileAtomic(page, withFieldTable(readFileSync(page, 'utf8'), schemaFieldTable(schemaFields(scenarioSchema))));
console.log(`wrote the field table of ${page}`);

const hardware = 'docs/hardware.md';
const { presetSourcesTable, withPresetSources } = await import('../dist/cli/presetSourcesTable.js');
writeFileAtomic(hardware, withPresetSources(readFileSync(hardware, 'utf8'), presetSourcesTable()));
console.log(`wrote the preset sources of ${hardware}`);
