import { closeSync, existsSync, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs';
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
    mkdirSync(folder, { recursive: true });
  } catch (err) {
    throw new UsageError(`${flag} ${path}: cannot create the folder ${folder}: ${fileWriteErrorReason(err, folder)}`);
  }
  // Opening it for appending is the one test that holds for every user (root passes access checks on /proc too);
  // it changes nothing in a file that exists, and a file made only for the test is removed again.
  const existed = existsSync(path);
  try {
    closeSync(openSync(path, 'a'));
    if (!existed) unlinkSync(path);
  } catch (err) {
    throw new UsageError(`${flag} ${path}: cannot write it: ${fileWriteErrorReason(err, path)}`);
  }
}
