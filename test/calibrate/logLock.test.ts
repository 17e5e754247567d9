import { spawn, spawnSync } from 'node:child_process';
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
    expect(() => lockLog(log)).toThrow(
      new RegExp(`is being written by another calibration \\(process ${process.ppid}\\)`),
    );
  });

  it('takes over a lock left by a process that is gone, and releases its own', () => {
    const log = join(dir, 'b.jsonl');
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    writeFileSync(`${log}.lock`, gone);
    writeFileSync(`${log}.lock.${gone}`, gone); // killed before it removed the file it linked from
    const release = lockLog(log);
    expect(readFileSync(`${log}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} [0-9a-f]{16}$`));
    // Nothing else is left beside the log: not the dead run's file, not the one this lock was written from.
    expect(readdirSync(dir).filter((f) => f.startsWith('b.jsonl'))).toEqual(['b.jsonl.lock']);
    release();
    expect(existsSync(`${log}.lock`)).toBe(false);
    lockLog(log)(); // free again
  });

  /** The id of a process that has ended. */
  const deadPid = () =>
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;

  it('of two contenders that read the same dead lock, only the first to take it over gets the log', () => {
    const log = join(dir, 'c.jsonl');
    writeFileSync(`${log}.lock`, deadPid());
    // A reads the dead lock and is paused right there; B, meanwhile, takes it over; then A goes on.
    let releaseB: (() => void) | undefined;
    let paused = 0;
    const a = () =>
      lockLog(log, {
        onStale: () => {
          paused++;
          releaseB = lockLog(log);
        },
      });
    expect(a).toThrow(new RegExp(`is being written by another calibration \\(process ${process.pid}\\)`));
    expect(paused).toBe(1);
    expect(releaseB).toBeTypeOf('function');
    const owner = readFileSync(`${log}.lock`, 'utf8');
    expect(readdirSync(dir).filter((f) => f.startsWith('c.jsonl'))).toEqual(['c.jsonl.lock']);
    // B still holds it: A took nothing and removed nothing.
    expect(() => lockLog(log)).toThrow(LogError);
    expect(readFileSync(`${log}.lock`, 'utf8')).toBe(owner);
    releaseB!();
    expect(existsSync(`${log}.lock`)).toBe(false);
  });

  it('leaves alone the live lock another process made after the dead one was read', async () => {
    const log = join(dir, 'i.jsonl');
    const lock = `${log}.lock`;
    writeFileSync(lock, deadPid());
    const [ready, done] = ['ready', 'done'].map((f) => join(dir, `i.${f}`));
    // The other process replaces the dead lock with its own (as a contender that got there first would), then waits
    // until this one has tried, and says whether its lock survived.
    const script =
      `const fs = require('fs'); const [lock, ready, done] = process.argv.slice(1); const me = String(process.pid);
      fs.unlinkSync(lock); fs.writeFileSync(lock, me, { flag: 'wx' }); fs.writeFileSync(ready, '');
      const t = setInterval(() => { if (!fs.existsSync(done)) return; clearInterval(t);
        const kept = fs.existsSync(lock) && fs.readFileSync(lock, 'utf8') === me; if (kept) fs.unlinkSync(lock); ` +
      `process.stdout.write(kept ? 'kept' : 'lost'); }, 5);
      setTimeout(() => process.exit(1), 20000).unref();`;
    let child: ReturnType<typeof spawn> | undefined;
    let out = '';
    const attempt = () =>
      lockLog(log, {
        onStale: () => {
          child = spawn(process.execPath, ['-e', script, lock, ready, done], { stdio: ['ignore', 'pipe', 'inherit'] });
          child.stdout!.on('data', (d) => (out += d));
          const waitMs = new Int32Array(new SharedArrayBuffer(4));
          // This contender stays paused meanwhile.
          for (const until = Date.now() + 20_000; !existsSync(ready); Atomics.wait(waitMs, 0, 0, 5))
            if (Date.now() > until) throw new Error('the other process did not start');
        },
      });
    try {
      expect(attempt).toThrow(/is being written by another calibration \(process \d+\)/);
      expect(() => lockLog(log)).toThrow(`(process ${child!.pid})`);
    } finally {
      writeFileSync(done, '');
      if (child) await new Promise((resolve) => child!.on('close', resolve));
    }
    expect(out).toBe('kept');
  });

  it('of three contenders paused one inside the other at that point, exactly one gets the log', () => {
    const log = join(dir, 'd.jsonl');
    writeFileSync(`${log}.lock`, deadPid());
    const outcome: string[] = [];
    const attempt = (name: string, inside?: () => void) => () => {
      try {
        lockLog(log, { onStale: inside });
        outcome.push(`${name} got it`);
      } catch (err) {
        if (!(err instanceof LogError)) throw err;
        outcome.push(`${name} refused`);
      }
    };
    attempt('a', attempt('b', attempt('c')))();
    expect(outcome.filter((o) => o.endsWith('got it'))).toHaveLength(1);
    expect(outcome).toEqual(['c got it', 'b refused', 'a refused']);
  });

  it('lets a paused contender take the log once the one that took it over has released it', () => {
    const log = join(dir, 'e.jsonl');
    writeFileSync(`${log}.lock`, deadPid());
    const release = lockLog(log, { onStale: () => lockLog(log)() });
    expect(readFileSync(`${log}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    release();
    expect(readdirSync(dir).filter((f) => f.startsWith('e.jsonl'))).toEqual([]);
  });

  it('refuses a second lock of a log this process already holds (the same process id is not a dead owner)', () => {
    const log = join(dir, 'f.jsonl');
    const release = lockLog(log);
    expect(() => lockLog(log)).toThrow(new RegExp(`process ${process.pid}\\)`));
    release();
    // A lock with this process id that this process did not take (left by an earlier one with the same id): taken over.
    writeFileSync(`${log}.lock`, String(process.pid));
    lockLog(log)();
  });

  it('takes over a takeover guard left by a killed taker, and leaves nothing behind', () => {
    const log = join(dir, 'g.jsonl');
    writeFileSync(`${log}.lock`, deadPid());
    writeFileSync(`${log}.lock.takeover`, deadPid());
    const release = lockLog(log);
    expect(readdirSync(dir).filter((f) => f.startsWith('g.jsonl'))).toEqual(['g.jsonl.lock']);
    release();
  });

  it('waits while a live process holds the takeover guard, and does not remove it', async () => {
    const log = join(dir, 'h.jsonl');
    writeFileSync(`${log}.lock`, deadPid());
    const guard = `${log}.lock.takeover`;
    // Another taker: holds the guard for a moment, then checks that it is still its own before removing it.
    const script =
      `const fs = require('fs'); const me = process.pid + ' other'; fs.writeFileSync(process.argv[1], me);
      setTimeout(() => { const mine = fs.readFileSync(process.argv[1], 'utf8') === me; ` +
      `fs.unlinkSync(process.argv[1]); process.stdout.write(mine ? 'kept' : 'lost'); }, 300);`;
    const child = spawn(process.execPath, ['-e', script, guard], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const done = new Promise((resolve) => child.on('close', resolve));
    while (!existsSync(guard)) await new Promise((r) => setTimeout(r, 5));
    const release = lockLog(log);
    await done;
    expect(out).toBe('kept');
    expect(readFileSync(`${log}.lock`, 'utf8')).toMatch(new RegExp(`^${process.pid} `));
    release();
  });
});
