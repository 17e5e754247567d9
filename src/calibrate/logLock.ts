import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, linkSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { LogError } from './measurementLog.js';

/**
 * The lock file of a measurement log, `<log>.lock`. It holds the owner's process id and a random token
 * (`12345 9f3c…`): the id tells whether the owner still runs, the token tells one lock from the next, even of the
 * same process id (a container's pid 1 after a restart, two locks of one process).
 *
 * Taking over a lock whose owner is gone is where two processes could both win: both read the same dead lock, one
 * removes it and takes the log, and the other, a moment later, removes that new, live lock and takes it too. So a lock
 * is only ever removed by its owner, or by the holder of `<lock>.takeover`, itself a lock of the same kind, after it
 * has checked under that guard that the file is still the dead one it read (same token, same inode): no other process
 * can remove it in between, so the check stays true until the removal. Then every contender races for the freed name
 * with an exclusive create, which exactly one wins. A guard left by a taker that was killed is taken over the same way,
 * through `<lock>.takeover.takeover`.
 */

/** Test hooks: `onStale` runs after a contender has read a lock whose owner is gone and before it takes it over. */
export interface LockHooks {
  onStale?: (holderPid: number) => void;
}

/** One lock file as read through one descriptor, so that its content and its identity belong together. */
interface LockFile {
  content: string;
  dev: number;
  ino: number;
  mtimeMs: number;
}

/** Contents of the locks this process holds: a lock with this process id is live only if it is one of them. */
const held = new Set<string>();

/** Guards nest only when takers are killed while holding them; deeper than this, something else is wrong. */
const MAX_DEPTH = 4;
/** How long to keep trying while other processes take over or write a lock, and the wait between tries. */
const PATIENCE_MS = 5000;
const WAIT_MS = 5;
/** An empty lock younger than this is one being written (a file system without hard links writes it in place). */
const WRITING_MS = 2000;

const errCode = (err: unknown) => (err as NodeJS.ErrnoException).code;

/** Whether a process with this id runs (one of another user counts: it exists). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errCode(err) === 'EPERM';
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function readLock(path: string): LockFile | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if (errCode(err) === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    return { content: readFileSync(fd, 'utf8'), dev: st.dev, ino: st.ino, mtimeMs: st.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

const sameLock = (a: LockFile, b: LockFile) =>
  a.content === b.content && a.dev === b.dev && a.ino === b.ino && a.mtimeMs === b.mtimeMs;

/** The owner's process id (the first word; a lock of an older version holds only the id), or NaN. */
const ownerOf = (content: string) => Number(content.trim().split(/\s+/)[0] || NaN);

/** Creates `path` holding `content` if it does not exist; false if it does. */
function createExclusive(path: string, content: string): boolean {
  // Written aside and linked into place, so the lock never exists without its content.
  const aside = `${path}.${process.pid}`;
  writeFileSync(aside, content);
  try {
    linkSync(aside, path);
    return true;
  } catch (err) {
    if (errCode(err) === 'EEXIST') return false;
    try {
      writeFileSync(path, content, { flag: 'wx' }); // a file system without hard links
      return true;
    } catch (e) {
      if (errCode(e) === 'EEXIST') return false;
      throw e;
    }
  } finally {
    // Another contender's clean-up may have removed it already (a reused pid): nothing is lost either way.
    try {
      unlinkSync(aside);
    } catch (err) {
      if (errCode(err) !== 'ENOENT') throw err;
    }
  }
}

/** Removes `path` if it is still the lock this process created with `content`. */
function releaseLock(path: string, content: string): void {
  held.delete(content);
  try {
    if (readFileSync(path, 'utf8') === content) unlinkSync(path);
  } catch {
    // already gone
  }
}

/** The lock's content when taken; the live owner's process id; or nothing when time ran out. */
type Take = { content: string } | { busy: number } | undefined;

/**
 * Takes the lock at `path`, taking over one whose owner is gone (under the guard `<path>.takeover`), until `deadline`
 * (ms since the epoch).
 */
function take(path: string, depth: number, deadline: number, hooks: LockHooks): Take {
  if (depth > MAX_DEPTH) return undefined;
  while (Date.now() < deadline) {
    const content = `${process.pid} ${randomBytes(8).toString('hex')}`;
    if (createExclusive(path, content)) {
      held.add(content);
      return { content };
    }
    const seen = readLock(path);
    if (!seen) continue; // released in between
    const holder = ownerOf(seen.content);
    if (seen.content === '' && Date.now() - seen.mtimeMs < WRITING_MS) {
      sleep(WAIT_MS); // being written in place
      continue;
    }
    const live =
      Number.isInteger(holder) && holder > 0 && (holder === process.pid ? held.has(seen.content) : alive(holder));
    if (live) return { busy: holder };
    hooks.onStale?.(holder);
    const guardPath = `${path}.takeover`;
    const guard = take(guardPath, depth + 1, deadline, {});
    if (!guard || 'busy' in guard) {
      sleep(WAIT_MS); // another process is taking it over: see what it leaves
      continue;
    }
    try {
      const now = readLock(path);
      // Still the dead lock read above: nobody else may remove it while this process holds the guard.
      if (now && sameLock(now, seen)) {
        unlinkSync(path);
        try {
          unlinkSync(`${path}.${holder}`); // and the file it was written from, if its owner died before removing it
        } catch {
          // none
        }
      }
    } finally {
      releaseLock(guardPath, guard.content);
    }
  }
  return undefined;
}

/**
 * Takes `<log>.lock` so that two calibrations cannot append to one measurement log at once: their timings would disturb
 * each other and both would write the profile. A lock left by a process that no longer runs (killed) is taken over; of
 * several processes that find the same such lock, exactly one gets the log. Returns the function that releases it.
 * @param hooks for tests only
 * @throws LogError when another running calibration holds the log
 */
export function lockLog(logPath: string, hooks: LockHooks = {}): () => void {
  const lock = `${logPath}.lock`;
  const got = take(lock, 0, Date.now() + PATIENCE_MS, hooks);
  if (!got) throw new LogError(`${logPath}: could not take its lock file ${lock}`);
  if ('busy' in got)
    throw new LogError(
      `${logPath} is being written by another calibration (process ${got.busy}); ` +
        'wait for it to end, or give this one another --log',
    );
  const release = () => {
    releaseLock(lock, got.content);
    process.off('exit', release);
  };
  process.on('exit', release);
  return release;
}
