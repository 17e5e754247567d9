import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { LogError } from './measurementLog.js';

/** Whether a process with this id runs (one of another user counts: it exists). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<log>.lock` (holding this process id) so that two calibrations cannot append to one measurement log at
 * once: their timings would disturb each other and both would write the profile. A lock left by a process that no
 * longer runs (killed) is taken over. Returns the function that releases it.
 * @throws LogError when another running calibration holds the log
 */
export function lockLog(logPath: string): () => void {
  const lock = `${logPath}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      // Written aside and linked into place, so the lock never exists without its process id in it.
      const mine = `${lock}.${process.pid}`;
      writeFileSync(mine, String(process.pid));
      try {
        linkSync(mine, lock);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw err;
        writeFileSync(lock, String(process.pid), { flag: 'wx' }); // a file system without hard links
      } finally {
        unlinkSync(mine);
      }
      const release = () => {
        try {
          if (readFileSync(lock, 'utf8') === String(process.pid)) unlinkSync(lock);
        } catch {
          // already gone
        }
        process.off('exit', release);
      };
      process.on('exit', release);
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder = NaN;
      try {
        holder = Number(readFileSync(lock, 'utf8').trim());
      } catch {
        continue; // released in between
      }
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && alive(holder)) {
        throw new LogError(`${logPath} is being written by another calibration (process ${holder}); wait for it to end, or give this one another --log`);
      }
      try {
        unlinkSync(lock); // left by a process that is gone
      } catch {
        // taken over by another process in between: try again
      }
      try {
        unlinkSync(`${lock}.${holder}`); // and the file it was written from, if it died before removing it
      } catch {
        // none
      }
    }
  }
  throw new LogError(`${logPath}: could not take its lock file ${lock}`);
}
