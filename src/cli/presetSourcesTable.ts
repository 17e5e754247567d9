import { presetCatalogue } from './presetsCommand.js';
import { markedBlockOf, withMarkedBlock } from '../scenario/fieldTablePage.js';

/** The markers around the generated preset table in docs/hardware.md. */
export const PRESET_SOURCES_START = '<!-- preset sources: written by npm run docs:fields from src/sim/hardware -->';
export const PRESET_SOURCES_END = '<!-- end of preset sources -->';

/** A table cell: pipes escaped, so a source that names "a | b" stays in its column. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

/** Every GPU, node and network preset with what it rests on, as a markdown table. */
export function presetSourcesTable(): string {
  const c = presetCatalogue();
  const rows = [
    ...c.gpus.map((g) => `| GPU | \`${g.name}\` (${g.architecture}) | ${cell(g.source)} |`),
    ...c.nodes.map((n) => `| node | \`${n.name}\` (${n.gpusPerNode} × ${n.gpu}) | ${cell(n.source)} |`),
    ...c.networks.map((n) => `| network | \`${n.name}\` | ${cell(n.source)} |`),
  ];
  return ['| kind | preset | rests on |', '|---|---|---|', ...rows].join('\n');
}

/** `page` with `table` between the preset-source markers; the page must have them. */
export function withPresetSources(page: string, table: string): string {
  const out = withMarkedBlock(page, PRESET_SOURCES_START, PRESET_SOURCES_END, table);
  if (out === undefined) throw new Error('the page has no preset-source markers');
  return out;
}

/** The table between the markers, or undefined when the page has none. */
export function presetSourcesOf(page: string): string | undefined {
  return markedBlockOf(page, PRESET_SOURCES_START, PRESET_SOURCES_END);
}
