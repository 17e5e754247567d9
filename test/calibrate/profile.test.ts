import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogError, MeasurementLog, setupDifference, parseLog, toRecord } from '../../src/calibrate/measurementLog.js';
import {
  parseProfile,
  PROFILE_SCHEMA_VERSION,
  ProfileError,
  readProfile,
  writeProfile,
} from '../../src/calibrate/profile.js';
import { FitError } from '../../src/calibrate/stats.js';
import type { PlannedItem } from '../../src/calibrate/types.js';
import { syntheticProfile } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'clustersim-profile-'));

describe('the profile schema', () => {
  it('accepts a profile and reads back what was written', () => {
    const p = syntheticProfile();
    const path = join(dir, 'p.json');
    writeProfile(path, p);
    expect(readProfile(path)).toEqual(p);
    expect(p.schemaVersion).toBe(PROFILE_SCHEMA_VERSION);
  });

  it('records the machine, every measurement summary, the noise and the fitted constants', () => {
    const p = syntheticProfile();
    for (const k of [
      'schema',
      'schemaVersion',
      'createdAt',
      'tool',
      'backend',
      'device',
      'machine',
      'noise',
      'measurements',
      'fit',
    ])
      expect(p).toHaveProperty(k);
    for (const k of ['launchS', 'memoryBandwidthGBps', 'copies', 'gemm', 'collectives'])
      expect(p.fit).toHaveProperty(k);
    expect(p.measurements[0]).toEqual(
      expect.objectContaining({ id: 'launch', medianS: expect.any(Number), spreadPct: expect.any(Number), samples: 5 }),
    );
  });

  it('names the fields that are wrong', () => {
    const p = syntheticProfile() as unknown as Record<string, any>;
    p.fit.launchS = -1;
    p.backend = 'tpu';
    expect(() => parseProfile(p, 'x.json')).toThrow(
      /x.json is not a valid clustersim profile:[\s\S]*backend[\s\S]*fit.launchS/,
    );
  });

  it(
    'refuses a profile without what the simulator reads from it ' + '(CPU memory, threads, clock, the fp32 GEMM fit)',
    () => {
      const edit = (f: (p: Record<string, any>) => void) => {
        const p = syntheticProfile() as unknown as Record<string, any>;
        f(p);
        return () => parseProfile(p, 'x.json');
      };
      // Each of these used to be accepted: "memory per GPU … of NaN B: OOM", an MFU of 191% on 0 threads,
      // a 0.01 TFLOP/s placeholder.
      expect(edit((p) => delete p.machine.cpu.memoryBytes)).toThrow(/machine\.cpu\.memoryBytes: Required/);
      expect(edit((p) => (p.machine.computeThreads = 0))).toThrow(/machine\.computeThreads/);
      expect(edit((p) => (p.machine.computeThreads = '4'))).toThrow(/machine\.computeThreads/);
      expect(edit((p) => (p.machine.cpuClock = 'sundial'))).toThrow(/machine\.cpuClock/);
      expect(edit((p) => (p.fit.gemm = {}))).toThrow(/fit\.gemm: no GEMM fit/);
      expect(edit((p) => (p.fit.gemm = { bf16: p.fit.gemm.fp32 }))).toThrow(
        /fit\.gemm\.fp32: a cpu profile needs its fp32 GEMM fit/,
      );
      expect(edit((p) => (p.machine.cpuClock = 'wall'))).not.toThrow();
    },
  );

  it('tells apart a newer schema version and a file that is not a profile', () => {
    expect(() => parseProfile({ ...syntheticProfile(), schemaVersion: 99 }, 'x.json')).toThrow(
      /schema version 99 is not supported .*written by a newer clustersim: upgrade clustersim to read it/,
    );
    expect(() => parseProfile({ ...syntheticProfile(), schemaVersion: 0 }, 'x.json')).toThrow(
      /schema version 0 is not supported .*calibrate again with this version/,
    );
    const notProfile =
      'x.json is not a clustersim calibration profile: it holds %s, ' +
      'but a profile is a JSON object with "schema": "clustersim.profile", the fitted constants of a machine; ' +
      'make one with `clustersim calibrate --out profile.json`';
    expect(() => parseProfile({ hello: 1, world: 2 }, 'x.json')).toThrow(
      notProfile.replace('%s', 'an object with the fields hello, world, and no "schema"'),
    );
    expect(() => parseProfile({ schema: 'other.tool', createdAt: 1 }, 'x.json')).toThrow(
      notProfile.replace('%s', 'an object with "schema": "other.tool"'),
    );
    expect(() => parseProfile([1, 2], 'x.json')).toThrow(notProfile.replace('%s', 'a list of 2'));
    expect(() => parseProfile(7, 'x.json')).toThrow(notProfile.replace('%s', 'the number 7'));
    writeFileSync(join(dir, 'bad.json'), '{ nope');
    expect(() => readProfile(join(dir, 'bad.json'))).toThrow(/is not JSON/);
    expect(() => readProfile(join(dir, 'missing.json'))).toThrow(ProfileError);
    expect(() => readProfile(join(dir, 'missing.json'))).toThrow(/no such file/);
    // The measurement log (JSON lines) given in place of the profile: said so, with what to give instead.
    expect(() => readProfile('reports/calibration/cpu/measurements.jsonl')).toThrow(
      /is the measurement log of a calibration, not its profile: give the file calibrate wrote with --out/,
    );
  });
});

describe('the measurement log', () => {
  const planned: PlannedItem = {
    id: 'copy/h2h/1024',
    group: 'copy h2h',
    item: { kind: 'copy', direction: 'h2h', pinned: true, bytes: 1024, warmup: 1, repeats: 3, inner: 1 },
  };
  const machine = syntheticProfile().machine;

  it('turns a native result into a record and rejects malformed results', () => {
    const r = toRecord(planned, { samplesS: [2e-6, 1e-6, 3e-6], extra: { hostLaunchS: 1e-6 }, notes: {} });
    expect(r.summary.medianS).toBe(2e-6);
    expect(r.extra).toEqual({ hostLaunchS: 1e-6 });
    expect(r.notes).toBeUndefined();
    expect(() => toRecord(planned, { samplesS: [], extra: {}, notes: {} })).toThrow(FitError);
    expect(() => toRecord(planned, { samplesS: [0], extra: {}, notes: {} })).toThrow(/invalid time/);
    expect(() => toRecord(planned, {} as never)).toThrow(/no samples/);
  });

  it('appends records as they are taken and resumes from them', () => {
    const path = join(dir, 'log.jsonl');
    const log = MeasurementLog.create(path, { backend: 'cpu', quick: true, machine, startedAt: 'now' });
    log.append(toRecord(planned, { samplesS: [1e-6], extra: {}, notes: {} }));
    expect(readFileSync(path, 'utf8').trim().split('\n')).toHaveLength(2);
    const { parsed } = MeasurementLog.resume(path, { backend: 'cpu', quick: true });
    expect(parsed.header?.backend).toBe('cpu');
    expect(parsed.records.map((r) => r.id)).toEqual([planned.id]);
  });

  it('refuses to overwrite a log and checks a resumed one matches', () => {
    const path = join(dir, 'log2.jsonl');
    MeasurementLog.create(path, { backend: 'cpu', quick: true, machine, startedAt: 'now' });
    expect(() => MeasurementLog.create(path, { backend: 'cpu', quick: true, machine, startedAt: 'now' })).toThrow(
      /already holds measurements: pass --resume/,
    );
    expect(() => MeasurementLog.resume(path, { backend: 'cuda', quick: true })).toThrow(
      /measured with the cpu backend, not cuda; pass --backend cpu/,
    );
    expect(() => MeasurementLog.resume(path, { backend: 'cpu', quick: false })).toThrow(
      /was a --quick calibration; add --quick/,
    );
    expect(() => MeasurementLog.resume(join(dir, 'none.jsonl'), { backend: 'cpu', quick: true })).toThrow(LogError);
    expect(MeasurementLog.resume(path, { backend: 'cpu', quick: true, machine }).parsed.header?.backend).toBe('cpu');
    expect(() =>
      MeasurementLog.resume(path, {
        backend: 'cpu',
        quick: true,
        machine: { ...machine, computeThreads: (machine.computeThreads ?? 1) + 1 },
      }),
    ).toThrow(
      new RegExp(
        /was measured with threads \d+, this run \d+; .*resume it with the same setup \(--threads \d+\), /.source +
          /or start a new log \(--log another.jsonl\)/.source,
      ),
    );
    // No option can match a log from another CPU: none is suggested.
    let other = '';
    try {
      MeasurementLog.resume(path, {
        backend: 'cpu',
        quick: true,
        machine: {
          ...machine,
          cpu: { ...machine.cpu, model: 'another CPU' },
          computeThreads: (machine.computeThreads ?? 1) + 1,
        },
      });
    } catch (err) {
      other = (err as Error).message;
    }
    expect(other).toMatch(
      /was measured with CPU .*, this run another CPU; .*resume it with the same setup, or start a new log/,
    );
    expect(other).not.toContain('--threads');
    const gpu = (name: string, driver: string) =>
      ({
        ...machine,
        cuda: { driverVersion: driver, libraries: {}, devices: [{ name }], ncclEnv: {} },
      }) as unknown as typeof machine;
    expect(setupDifference(gpu('NVIDIA H200', '570'), gpu('NVIDIA H200', '570'))).toBeUndefined();
    expect(setupDifference(gpu('NVIDIA H200', '570'), gpu('NVIDIA H100 80GB HBM3', '570'))).toBe(
      'GPUs 1 × NVIDIA H200, this run 1 × NVIDIA H100 80GB HBM3',
    );
    expect(setupDifference(gpu('NVIDIA H200', '570'), gpu('NVIDIA H200', '575'))).toBe('driver 570, this run 575');
    writeFileSync(join(dir, 'other.jsonl'), '{"a":1}\n');
    expect(() => MeasurementLog.resume(join(dir, 'other.jsonl'), { backend: 'cpu', quick: true })).toThrow(
      /not a clustersim measurement log/,
    );
  });

  it('skips a line cut short by an interruption and keeps the latest record per id', () => {
    const rec = (s: number) => JSON.stringify(toRecord(planned, { samplesS: [s], extra: {}, notes: {} }));
    const parsed = parseLog(`${rec(1e-6)}\n${rec(2e-6)}\n{"type":"measurem`);
    expect(parsed.records).toHaveLength(1);
    expect(parsed.records[0].summary.medianS).toBe(2e-6);
    expect(parsed.badLines).toEqual([3]);
  });

  it('drops a last line cut short when it resumes, so that the next record starts a line of its own', () => {
    const path = join(dir, 'cut.jsonl');
    const log = MeasurementLog.create(path, { backend: 'cpu', quick: true, machine, startedAt: 'now' });
    log.append(toRecord(planned, { samplesS: [1e-6], extra: {}, notes: {} }));
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"type":"measurement","id":"copy/h2h/20`);
    const again = MeasurementLog.resume(path, { backend: 'cpu', quick: true });
    expect(again.parsed.badLines).toEqual([3]);
    again.log.append(toRecord({ ...planned, id: 'copy/h2h/2048' }, { samplesS: [2e-6], extra: {}, notes: {} }));
    const after = parseLog(readFileSync(path, 'utf8'));
    expect(after.badLines).toEqual([]);
    expect(after.records.map((r) => r.id)).toEqual([planned.id, 'copy/h2h/2048']);
  });

  it("keeps a whole last line that lost its line end (an editor's doing), header included, and ends it", () => {
    for (const lines of [1, 2]) {
      const path = join(dir, `unended-${lines}.jsonl`);
      const log = MeasurementLog.create(path, { backend: 'cpu', quick: true, machine, startedAt: 'now' });
      if (lines === 2) log.append(toRecord(planned, { samplesS: [1e-6], extra: {}, notes: {} }));
      writeFileSync(path, readFileSync(path, 'utf8').replace(/\n$/, ''));
      const again = MeasurementLog.resume(path, { backend: 'cpu', quick: true });
      expect(again.parsed.records).toHaveLength(lines - 1);
      again.log.append(toRecord({ ...planned, id: 'copy/h2h/4096' }, { samplesS: [2e-6], extra: {}, notes: {} }));
      const after = parseLog(readFileSync(path, 'utf8'));
      expect(after.header?.backend).toBe('cpu');
      expect(after.badLines).toEqual([]);
      expect(after.records.map((r) => r.id)).toEqual([...(lines === 2 ? [planned.id] : []), 'copy/h2h/4096']);
    }
  });
});
