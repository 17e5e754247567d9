import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { shellWords } from '../../src/scenario/importShellWords.js';

/** Options whose value is a file the command writes: the test sends them to a temporary folder. */
const OUTPUT_OPTIONS = new Set(['--timeline', '--report', '--trace', '--csv', '--svg', '--out', '--write']);

/**
 * The `$ clustersim …` lines of a command's --help that a user can paste as they are in a fresh clone: they name
 * only bundled files, no placeholder (a.yaml, part-*.jsonl, a profile made earlier, shell variables) and no GPU.
 */
async function runnableExamples(command: string): Promise<string[][]> {
  const help = command === '' ? await cli('--help') : await cli(command, '--help');
  const lines = (help.out + help.err).split('\n').filter((l) => /^\s*\$ clustersim /.test(l));
  return lines
    .map((l) => shellWords(l.replace(/^\s*\$ clustersim /, '').replace(/\s+#.*$/, ''), 'help').words)
    .filter(
      (words) => !words.some((w) => w.includes('$') || w.includes('*') || /^(a|b|c)\.yaml$/.test(w) || w === 'cuda'),
    )
    .filter((words) => !(words[0] === 'check-profile' && words.includes('--profile')))
    .filter((words) => words[0] !== 'calibrate');
}

describe('the examples in --help run as printed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'clustersim-help-'));
  // '' is the top-level --help.
  it.each(['', 'simulate', 'memory', 'scale', 'presets', 'collective', 'plan'])(
    'clustersim %s --help',
    async (command) => {
      const examples = await runnableExamples(command);
      expect(examples.length).toBeGreaterThan(0);
      for (const [i, words] of examples.entries()) {
        const args = words.map((w, k) =>
          k > 0 && OUTPUT_OPTIONS.has(words[k - 1]) ? join(dir, `${command || 'top'}-${i}-${w}`) : w,
        );
        for (const w of args) if (/^scenarios\//.test(w)) expect(existsSync(w), w).toBe(true);
        const r = await cli(...args);
        expect(r.code, `clustersim ${words.join(' ')}\n${r.err}`).toBe(0);
      }
    },
    180_000,
  );
});
