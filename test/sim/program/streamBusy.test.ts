import { describe, expect, it } from 'vitest';
import { Program } from '../../../src/sim/program/types.js';
import { localBusy } from '../../../src/sim/program/streamBusy.js';

describe('stream busy time', () => {
  it('adds each stream’s tasks, split into work of no micro-batch and the least of any one micro-batch', () => {
    const p = new Program(2);
    p.local(0, 'compute', 'forward', 'f0', 100, [], 0);
    p.local(0, 'compute', 'forward', 'f1', 150, [], 1);
    p.local(0, 'compute', 'optimizer', 'opt', 30);
    p.local(1, 'comm', 'other', 'x', 5, [], 1);
    p.collective('tp-collective', 'ar', { op: 'all_reduce', group: [0, 1], bytes: 1e6 }, [], 0, 'compute');
    p.transfer('pp-send', 'send', [0, 1], 1e6, []);
    const without = localBusy(p, 2);
    expect(without.get('0/compute')).toEqual({ fixedNs: 30, perMicroBatchNs: 100 });
    // A micro-batch with no task on the stream puts no work on it: the least is 0.
    expect(without.get('1/comm')).toEqual({ fixedNs: 0, perMicroBatchNs: 0 });
    // The collective counts on both ranks' compute streams with the time given for it; the send never.
    const withCollectives = localBusy(p, 2, () => 7);
    expect(withCollectives.get('0/compute')).toEqual({ fixedNs: 30, perMicroBatchNs: 107 });
    expect(withCollectives.get('1/compute')).toEqual({ fixedNs: 0, perMicroBatchNs: 0 });
    expect([...withCollectives.keys()].some((k) => k.endsWith('/pp'))).toBe(false);
  });
});
