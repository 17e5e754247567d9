import { dirname } from 'node:path';
import { InputFileError } from './inputFile.js';

/** Why a file could not be read, in words a user acts on (for the messages of every command that reads files). */
export function fileErrorReason(err: unknown): string {
  if (err instanceof InputFileError) return err.reason;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  if (code === 'EACCES') return 'permission denied';
  return code ?? String(err);
}

/**
 * Why a file could not be written (or its folder made), in words a user acts on, with the system's code after
 * them for searching: `the file system is read-only (EROFS)`.
 */
export function fileWriteErrorReason(err: unknown, path: string): string {
  const code = (err as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    // The folder exists (or was just made) yet the file is not there: a folder like /proc that takes no new files.
    ENOENT: `no such file, and ${dirname(path)} does not let one be created`,
    EACCES: 'permission denied',
    EPERM: 'not permitted',
    EROFS: 'the file system is read-only',
    EISDIR: 'it is a folder, not a file',
    ENOTDIR: 'a part of the path is a file, not a folder',
    EEXIST: 'a part of the path is a file, not a folder',
    ENOSPC: 'no space left on the device',
  };
  if (code === undefined) return String(err);
  return code in words ? `${words[code]} (${code})` : code;
}
