// Writes the field table of docs/scenarios.md from the scenario schema (after `npm run build`):
// npm run docs:fields. test/docs/scenarioFields.test.ts fails when the page and the schema disagree.
import { readFileSync } from 'node:fs';
import { writeFileAtomic } from '../dist/atomicWrite.js';
import { scenarioSchema } from '../dist/scenario/schema.js';
import { schemaFields, schemaFieldTable } from '../dist/scenario/schemaFields.js';
import { withFieldTable } from '../dist/scenario/fieldTablePage.js';

const page = 'docs/scenarios.md';
writeFileAtomic(page, withFieldTable(readFileSync(page, 'utf8'), schemaFieldTable(schemaFields(scenarioSchema))));
console.log(`wrote the field table of ${page}`);
