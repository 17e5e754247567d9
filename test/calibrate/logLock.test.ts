import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockLog } from '../../src/calibrate/logLock.js';
import { LogError } from '../../src/calibrate/measurementLog.js';

describe('one calibration per measurement log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loglock-'));

  it('refuses a log another running calibration holds, and names that process', () => {
    const log = join(dir, 'a.jsonl');
    // A lock held by a running process other than this one: the parent of this test process.
    writeFileSync(`${log}.lock`, String(process.ppid));
    expect(() => lockLog(log)).toThrow(LogError);
    expect(() => lockLog(log)).toThrow(new RegExp(`is being written by another calibration \\(process ${process.ppid}\\)`));
  });

  it('takes over a lock left by a process that is gone, and releases its own', () => {
    const log = join(dir, 'b.jsonl');
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    writeFileSync(`${log}.lock`, gone);
    writeFileSync(`${log}.lock.${gone}`, gone); // killed before it removed the file it linked from
    const release = lockLog(log);
    expect(readFileSync(`${log}.lock`, 'utf8')).toBe(String(process.pid));
    // Nothing else is left beside the log: not the dead run's file, not the one this lock was written from.
    expect(readdirSync(dir).filter((f) => f.startsWith('b.jsonl'))).toEqual(['b.jsonl.lock']);
    release();
    expect(existsSync(`${log}.lock`)).toBe(false);
    lockLog(log)(); // free again
  });
});
