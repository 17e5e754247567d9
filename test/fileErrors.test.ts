import { describe, expect, it } from 'vitest';
import { fileWriteErrorReason } from '../src/fileErrors.js';

/** An error as Node's file functions throw it. */
function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: failed`), { code });
}

describe('why a file could not be written', () => {
  it.each([
    ['EACCES', 'permission denied (EACCES)'],
    ['EROFS', 'the file system is read-only (EROFS)'],
    ['EISDIR', 'it is a folder, not a file (EISDIR)'],
    ['ENOTDIR', 'a part of the path is a file, not a folder (ENOTDIR)'],
    ['ENOENT', 'no such file, and /mnt/ro does not let one be created (ENOENT)'],
  ])('puts %s in words', (code, words) => {
    expect(fileWriteErrorReason(errno(code), '/mnt/ro/t.svg')).toBe(words);
  });

  it('gives an unusual code as it is, and an error without a code as its text', () => {
    expect(fileWriteErrorReason(errno('EMLINK'), 'x')).toBe('EMLINK');
    expect(fileWriteErrorReason(new Error('boom'), 'x')).toBe('Error: boom');
  });
});
