import { describe, expect, it } from 'vitest';
import { buildTopology } from '../../../src/sim/network/topology.js';
import { CollectiveService } from '../../../src/sim/collectives/collectiveService.js';
import { tableTimeNs, type MeasuredCollectiveTable } from '../../../src/sim/collectives/measuredTable.js';
import { parseCollectiveTable } from '../../../src/scenario/ncclTestsTable.js';
import { presetCluster } from '../../helpers/clusters.js';

const MiB = 2 ** 20;
const range = (n: number) => [...Array(n).keys()];

/** A made-up 8-GPU all-reduce table: 100 µs at 1 MiB, 150 µs at 2 MiB, 1,000 µs at 64 MiB. */
const table: MeasuredCollectiveTable = {
  op: 'all_reduce',
  ranks: 8,
  points: [
    { bytes: 1 * MiB, timeNs: 100e3 },
    { bytes: 2 * MiB, timeNs: 150e3 },
    { bytes: 64 * MiB, timeNs: 1000e3 },
  ],
  source: 'test',
};

describe('a measured collective table', () => {
  it('interpolates linearly between sizes and keeps the last algorithm bandwidth beyond them', () => {
    expect(tableTimeNs(table, 1 * MiB)).toBe(100e3);
    expect(tableTimeNs(table, 1.5 * MiB)).toBeCloseTo(125e3, 6);
    expect(tableTimeNs(table, 33 * MiB)).toBeCloseTo(150e3 + (850e3 * 31) / 62, 6);
    expect(tableTimeNs(table, 128 * MiB)).toBeCloseTo(2000e3, 6);
    expect(tableTimeNs(table, 512 * 1024)).toBeUndefined();
  });

  it('reads nccl-tests output (with and without the root column) and CSV tables in ns or µs', () => {
    const withRoot = [
      '#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong',
      '#   (B) (elements)                 (us)  (GB/s) (GB/s)         (us)  (GB/s) (GB/s)',
      '  2097152  524288  float  sum  -1  93.25  22.49  39.36  0  92.97  22.56  39.47  0',
      '  1048576  262144  float  sum  -1  92.79  11.30  19.78  0  92.15  11.38  19.91  0',
      '# Out of bounds values : 0 OK',
    ].join('\n');
    expect(parseCollectiveTable(withRoot, 'all_reduce', 8, 'a').points).toEqual([
      { bytes: 1048576, timeNs: 92790 },
      { bytes: 2097152, timeNs: 93250 },
    ]);
    const noRoot =
      '#  size  count  type  redop  time  algbw  busbw  error\n 1048576 262144 float sum 50.00 20.97 36.70 0e+00\n';
    expect(parseCollectiveTable(noRoot, 'all_reduce', 8, 'b').points).toEqual([{ bytes: 1048576, timeNs: 50000 }]);
    const csvNs =
      '\uFEFFsize(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\r\n' +
      '1048576,262144,float,44210,23.72,45100,23.25\r\n';
    expect(parseCollectiveTable(csvNs, 'all_reduce', 2, 'c').points).toEqual([{ bytes: 1048576, timeNs: 44210 }]);
    expect(parseCollectiveTable('size,time(us)\n4096,12.5\n', 'all_gather', 4, 'd').points).toEqual([
      { bytes: 4096, timeNs: 12500 },
    ]);
  });

  it(
    'reads nccl-tests output with NCCL_DEBUG lines (commas and all), ' +
      'rows pasted without their header, and CSV comments',
    () => {
      const log = [
        '# nThread 1 nGpus 8 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20',
        'host:1:1 [0] NCCL INFO 24 coll channels, 0 collnet channels, ' +
          '0 nvls channels, 32 p2p channels, 32 p2p channels per peer',
        '#       size         count      type   redop    root     ' +
          'time   algbw   busbw #wrong     time   algbw   busbw #wrong',
        '     1048576        262144     float     sum      -1    ' +
          '92.79   11.30   19.78      0    92.15   11.38   19.91      0',
        '# Avg bus bandwidth    : 19.78',
      ].join('\n');
      expect(parseCollectiveTable(log, 'all_reduce', 8, 'log').points).toEqual([{ bytes: 1048576, timeNs: 92790 }]);
      // Without a header: 13 fields mean a root column, 12 mean none. Times of 10 ms and more have no decimals.
      expect(
        parseCollectiveTable(
          '  268435456  67108864  float  sum  -1  12345  21.74  38.05  0  12340  21.75  38.07  0\n',
          'all_reduce',
          8,
          'r',
        ).points,
      ).toEqual([{ bytes: 268435456, timeNs: 12345000 }]);
      expect(
        parseCollectiveTable(
          '  268435456  67108864  float  sum  12345  21.74  38.05  0  12340  21.75  38.07  0\n',
          'all_reduce',
          8,
          's',
        ).points,
      ).toEqual([{ bytes: 268435456, timeNs: 12345000 }]);
      expect(
        parseCollectiveTable('# measured on node 7\nsize(B),time(us)\n4096,12.5\n# end\n', 'all_reduce', 8, 'c').points,
      ).toEqual([{ bytes: 4096, timeNs: 12500 }]);
    },
  );

  it('checks the GPU count against the ranks nccl-tests lists', () => {
    const out = [
      '#  Rank  0 Group  0 Pid 1 on host device  0 [0x07] NVIDIA A100-SXM4-80GB',
      '#  Rank  1 Group  0 Pid 1 on host device  1 [0x0b] NVIDIA A100-SXM4-80GB',
      '#       size         count      type   redop    root     ' +
        'time   algbw   busbw #wrong     time   algbw   busbw #wrong',
      '     1048576        262144     float     sum      -1    ' +
        '44.21   23.72   23.72      0    45.10   23.25   23.25      0',
    ].join('\n');
    expect(parseCollectiveTable(out, 'all_reduce', 2, 'two').points).toHaveLength(1);
    expect(() => parseCollectiveTable(out, 'all_reduce', 8, 'two')).toThrow(
      /two: the nccl-tests output lists 2 ranks \('# Rank' lines\), but the table is declared for 8 GPUs/,
    );
  });

  it('checks that nccl-tests output is of the op it is declared for: by its banner, else by the redop column', () => {
    const rows = (redop: string) =>
      `#  size  count  type  redop  root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n` +
      `  1048576  262144  float  ${redop}  -1  92.79  11.30  19.78  0  92.15  11.38  19.91  0\n`;
    expect(() => parseCollectiveTable(rows('sum'), 'all_gather', 8, 'ar.txt')).toThrow(
      "ar.txt: the rows reduce with 'sum' (redop, as all_reduce_perf or reduce_scatter_perf write), " +
        'but this table is declared for all_gather (the output of all_gather_perf)',
    );
    expect(() => parseCollectiveTable(rows('none'), 'all_reduce', 8, 'ag.txt')).toThrow(
      /ag\.txt: the rows reduce nothing \(redop 'none'/,
    );
    expect(parseCollectiveTable(rows('none'), 'all_gather', 8, 'ag.txt').points).toHaveLength(1);
    expect(parseCollectiveTable(rows('sum'), 'reduce_scatter', 8, 'rs.txt').points).toHaveLength(1);
    const banner = `# Collective test starting: reduce_scatter_perf\n${rows('sum')}`;
    expect(() => parseCollectiveTable(banner, 'all_reduce', 8, 'rs.txt')).toThrow(
      'rs.txt: the output is of reduce_scatter_perf, ' +
        'but this table is declared for all_reduce (the output of all_reduce_perf)',
    );
  });

  it('says what is wrong with a file it cannot use', () => {
    expect(() => parseCollectiveTable('size,latency\n4096,12\n', 'all_reduce', 8, 'x.csv')).toThrow(
      /x\.csv: the CSV header needs a time\(ns\) or time\(us\) column next to size/,
    );
    expect(() => parseCollectiveTable('# nothing here\n', 'all_reduce', 8, 'y.txt')).toThrow(
      /y\.txt: no measurements found/,
    );
    expect(() => parseCollectiveTable('size(B),time(ns)\n4096,-3\n', 'all_reduce', 8, 'z.csv')).toThrow(
      /z\.csv line 2: size and time must be positive/,
    );
  });
});

describe('the collective service with a measured table', () => {
  const topology = buildTopology(presetCluster('dgx-a100-80gb', 2));
  const plain = new CollectiveService(topology);
  const measured = new CollectiveService(topology, {
    mode: 'aggregated',
    allReduceAlgorithm: 'auto',
    protocol: 'auto',
    measured: [table],
  });
  const node0 = range(8);

  it("takes the table's time on an idle node, at and between measured sizes and beyond them", () => {
    for (const bytes of [1 * MiB, 1.5 * MiB, 2 * MiB, 40 * MiB, 256 * MiB]) {
      expect(measured.simulateIdleNs('all_reduce', node0, bytes)).toBeCloseTo(tableTimeNs(table, bytes)!, -1);
    }
  });

  it("in step mode too (within the event times' rounding to whole ns per ring step)", () => {
    const step = new CollectiveService(topology, {
      mode: 'step',
      allReduceAlgorithm: 'auto',
      protocol: 'auto',
      measured: [table],
    });
    const expected = tableTimeNs(table, 40 * MiB)!;
    expect(Math.abs(step.simulateIdleNs('all_reduce', node0, 40 * MiB) - expected)).toBeLessThan(expected * 1e-4);
  });

  it('scales the model to meet the table below its smallest size', () => {
    const bytes = 256 * 1024;
    const expected =
      (plain.simulateIdleNs('all_reduce', node0, bytes) * 100e3) / plain.simulateIdleNs('all_reduce', node0, 1 * MiB);
    expect(measured.simulateIdleNs('all_reduce', node0, bytes)).toBeCloseTo(expected, -1);
  });

  it('meets the table with a forced tree too (its flows carry the medium-size correction)', () => {
    const tree = new CollectiveService(topology, {
      mode: 'aggregated',
      allReduceAlgorithm: 'tree',
      protocol: 'auto',
      measured: [table],
    });
    for (const bytes of [1 * MiB, 1.5 * MiB, 40 * MiB])
      expect(tree.simulateIdleNs('all_reduce', node0, bytes)).toBeCloseTo(tableTimeNs(table, bytes)!, -1);
  });

  it('leaves other group sizes, other ops and groups across nodes to the model', () => {
    expect(measured.simulateIdleNs('all_reduce', range(4), 8 * MiB)).toBe(
      plain.simulateIdleNs('all_reduce', range(4), 8 * MiB),
    );
    expect(measured.simulateIdleNs('all_gather', node0, 8 * MiB)).toBe(
      plain.simulateIdleNs('all_gather', node0, 8 * MiB),
    );
    const across = [0, 1, 2, 3, 8, 9, 10, 11];
    expect(measured.simulateIdleNs('all_reduce', across, 8 * MiB)).toBe(
      plain.simulateIdleNs('all_reduce', across, 8 * MiB),
    );
  });

  it('still shares the links: two calls on the same node at once take longer than one alone', () => {
    const bytes = 64 * MiB;
    const phases = measured.phases('all_reduce', node0, bytes);
    const { lastNs } = measured.simulateIdleTogetherNs([
      { phases, bytes },
      { phases, bytes },
    ]);
    expect(lastNs).toBeGreaterThan(1.5 * measured.simulateIdleNs('all_reduce', node0, bytes));
  });
});
