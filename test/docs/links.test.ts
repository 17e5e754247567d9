import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The markdown a reader walks: the README, CONTRIBUTING and every page of docs/. */
const PAGES = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Every relative link target of a page (the part before any #anchor), with its line. */
function relativeLinks(page: string): { line: number; target: string }[] {
  return readFileSync(page, 'utf8')
    .split('\n')
    .flatMap((text, i) => [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => ({ line: i + 1, target: m[1] })))
    .filter(({ target }) => !/^(https?:|mailto:|#)/.test(target))
    .map(({ line, target }) => ({ line, target: target.split('#')[0] }));
}

describe('the documentation', () => {
  it('links only to files that exist', () => {
    const broken = PAGES.flatMap((page) =>
      relativeLinks(page)
        .filter(({ target }) => !existsSync(normalize(join(dirname(page), target))))
        .map(({ line, target }) => `${page}:${line} → ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('reaches every page of docs/ from the README', () => {
    const linked = new Set(relativeLinks('README.md').map(({ target }) => normalize(target)));
    const pages = PAGES.filter((p) => p.startsWith('docs/'));
    expect(pages.length).toBeGreaterThan(5);
    expect(pages.filter((p) => !linked.has(normalize(p)))).toEqual([]);
  });

  it('keeps the README to a few screens (the reference lives in docs/)', () => {
    expect(readFileSync('README.md', 'utf8').split('\n').length).toBeLessThanOrEqual(220);
  });
});
