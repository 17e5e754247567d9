import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  realpathSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from './usageError.js';
import { fileWriteErrorReason } from '../fileErrors.js';

/**
 * Makes sure `path` (given as `flag`) can be written before any long work starts: its folder is created if missing,
 * and a path that is a folder, or a place this user cannot write, is refused as bad input (exit 2) instead of
 * failing with a system error after the work is done.
 */
export function prepareOutputFile(path: string, flag: string): void {
  if (existsSync(path) && statSync(path).isDirectory())
    throw new UsageError(`${flag} ${path} is a folder; give a file name in it`);
  const folder = dirname(path);
  if (existsSync(folder) && !statSync(folder).isDirectory())
    throw new UsageError(`${flag} ${path}: ${folder} is a file, not a folder`);
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
 * Whether two paths name one file: the same path once resolved (links followed, a dangling one to where it points), or,
 * when both exist, the same file on disk (a hard link).
 */
export function sameFile(a: string, b: string): boolean {
  const real = (p: string, depth = 0): string => {
    try {
      return realpathSync(p);
    } catch {
      // Not there (yet): a link to where it points, else its folder's real path and its name.
    }
    try {
      if (depth < 8 && lstatSync(p).isSymbolicLink()) return real(resolve(dirname(p), readlinkSync(p)), depth + 1);
    } catch {
      // No such entry.
    }
    try {
      return join(realpathSync(dirname(resolve(p))), basename(p));
    } catch {
      return resolve(p);
    }
  };
  if (real(a) === real(b)) return true;
  try {
    const [sa, sb] = [statSync(a), statSync(b)];
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch {
    return false;
  }
}

/** A path given on the command line, or undefined when it was not, and how a message names it. */
export type NamedPath = [path: string | undefined, name: string];

/**
 * Refuses, before any work, an output that is one of the files the run reads (it would be replaced by what was made
 * from it: `--timeline` given the scenario's name) or that another output also names (the second written would
 * replace the first).
 */
export function checkDistinctFiles(outputs: readonly NamedPath[], inputs: readonly NamedPath[]): void {
  // A device or pipe (/dev/null, /dev/stdout) can take several outputs.
  const given = outputs.filter((o): o is [string, string] => o[0] !== undefined && regularOrAbsent(o[0]));
  for (const [i, [path, flag]] of given.entries()) {
    for (const [input, what] of inputs) {
      if (input !== undefined && sameFile(path, input))
        throw new UsageError(
          `${flag} ${path} is ${what}, which this run reads: writing it would destroy it; ` +
            `give ${flag} another file name`,
        );
    }
    for (const [other, otherFlag] of given.slice(0, i)) {
      if (sameFile(path, other))
        throw new UsageError(
          `${otherFlag} ${other} and ${flag} ${path} are the same file: the second written would replace the first; ` +
            'give each its own file name',
        );
    }
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

function regularOrAbsent(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return true;
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
