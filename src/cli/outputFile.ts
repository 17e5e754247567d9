import { accessSync, closeSync, constants, existsSync, lstatSync, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { UsageError } from './usageError.js';
import { fileWriteErrorReason } from '../fileErrors.js';

/**
 * Makes sure `path` (given as `flag`) can be written before any long work starts: its folder is created if missing,
 * and a path that is a folder, or a place this user cannot write, is refused as bad input (exit 2) instead of
 * failing with a system error after the work is done.
 */
export function prepareOutputFile(path: string, flag: string): void {
  if (existsSync(path) && statSync(path).isDirectory()) throw new UsageError(`${flag} ${path} is a folder; give a file name in it`);
  const folder = dirname(path);
  if (existsSync(folder) && !statSync(folder).isDirectory()) throw new UsageError(`${flag} ${path}: ${folder} is a file, not a folder`);
  try {
    makeFolders(folder);
  } catch (err) {
    // The level that could not be made, which the reason's words are about.
    const level = (err as NodeJS.ErrnoException).path ?? folder;
    throw new UsageError(`${flag} ${path}: cannot create the folder ${level}: ${fileWriteErrorReason(err, level)}`);
  }
  // Opening the file is the one test that holds for every user (root passes access checks on /proc too). An absent
  // path is created exclusively ('wx' follows no link and takes no file another process made) and removed again;
  // an existing regular file is opened for appending, which changes nothing. Anything else (a FIFO a reader waits
  // on, a device, a link) must not be opened early: the permission check has to do.
  const kind = pathKind(path);
  try {
    if (kind === 'absent') {
      closeSync(openSync(path, 'wx'));
      unlinkSync(path);
    } else if (kind === 'file') {
      closeSync(openSync(path, 'a'));
    } else {
      accessSync(path, constants.W_OK);
    }
  } catch (err) {
    // A link to a file not made yet: only the write can tell.
    if (kind === 'other' && (err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new UsageError(`${flag} ${path}: cannot write it: ${fileWriteErrorReason(err, path)}`);
  }
}

/**
 * `mkdir -p`, one level at a time from the nearest folder that exists. Node's own recursive mkdir never returns where
 * a parent exists but refuses children (it retries forever under /proc, at full CPU); this reports that error.
 */
export function makeFolders(folder: string): void {
  const missing: string[] = [];
  // Level by level as written, as `mkdir -p` does: `a/../b` needs `a` (the system resolves `..` through it).
  for (let f = folder; !existsSync(f); f = dirname(f)) {
    if (dirname(f) === f) break;
    missing.push(f);
  }
  for (const f of missing.reverse()) {
    try {
      mkdirSync(f);
    } catch (err) {
      // `a/..` and `a/.` exist once `a` does, and another run may have made a level in between (parts of a sweep
      // started together): a folder is what was wanted.
      if (!((err as NodeJS.ErrnoException).code === 'EEXIST' && statSync(f).isDirectory())) throw err;
    }
  }
}

/** What is at `path` without following a final link: nothing, a regular file, or something else. */
function pathKind(path: string): 'absent' | 'file' | 'other' {
  try {
    return lstatSync(path).isFile() ? 'file' : 'other';
  } catch {
    return 'absent';
  }
}
