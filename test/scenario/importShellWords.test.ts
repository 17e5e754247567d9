import { describe, expect, it } from 'vitest';
import { shellWords } from '../../src/scenario/importShellWords.js';

describe('shellWords', () => {
  it('splits as a shell does: quotes, backslash-newline continuations (also CRLF), escapes and comments', () => {
    const text = `a "b c" 'd "e"' f\\ g \\\n  h \\\r\n i # comment here\n "x\\"y" --k=$V`;
    expect(shellWords(text, 'test').words).toEqual(['a', 'b c', 'd "e"', 'f g', 'h', 'i', 'x"y', '--k=$V']);
  });

  it('stops at a pipe or a redirection, dropping a file-descriptor number', () => {
    expect(shellWords('--a 1 2>&1 | tee log', 'test')).toEqual({ words: ['--a', '1'], stoppedAt: '>' });
    expect(shellWords('--a 1; echo done', 'test')).toEqual({ words: ['--a', '1'], stoppedAt: ';' });
  });

  it('rejects an unterminated quote', () => {
    expect(() => shellWords("--save '/tmp/x", 'test')).toThrow(/unterminated ' quote/);
  });
});
