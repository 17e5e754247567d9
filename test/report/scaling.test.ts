import { describe, expect, it } from 'vitest';
import { movedScalingBase, parseGpuCounts, withScaling, type ScaleRow } from '../../src/sweep/scaleMath.js';
import { SCALE_CSV_COLUMNS, SCALE_TABLE_HEADER, scaleCsv, scaleTableRows } from '../../src/report/scaleTable.js';
import { renderScalingChart } from '../../src/report/scalingChart.js';
import { parseSvg } from './fixtures.js';

const ok = (gpus: number, samplesPerS: number, status: ScaleRow['status'] = 'ok'): ScaleRow => ({
  gpus,
  status,
  nodes: Math.max(1, gpus / 8),
  dp: gpus,
  globalBatch: 256,
  stepTimeS: 256 / samplesPerS,
  samplesPerS,
  tokensPerS: samplesPerS * 512,
  exposedCommShare: 0.01,
  mfu: 0.5,
  memoryBytesPerGpu: (status === 'ok' ? 10 : 90) * 2 ** 30,
  capacityBytes: 80 * 2 ** 30,
  fits: status === 'ok',
});

describe('scaling maths', () => {
  it('measures speedup and efficiency against the smallest simulated size', () => {
    const rows = withScaling([{ gpus: 4, status: 'infeasible', reason: 'x' }, ok(8, 100), ok(16, 180), ok(32, 320)]);
    expect(rows[0].speedup).toBeUndefined();
    expect(rows[1]).toMatchObject({ speedup: 1, efficiency: 1 });
    expect(rows[2].speedup).toBeCloseTo(1.8, 12);
    expect(rows[2].efficiency).toBeCloseTo(0.9, 12);
    expect(rows[3].speedup).toBeCloseTo(3.2, 12);
    expect(rows[3].efficiency).toBeCloseTo(0.8, 12);
    expect(movedScalingBase(rows)).toBeUndefined();
  });

  it('names the size it measures against when smaller sizes were interrupted, not when they cannot be built', () => {
    const cut: ScaleRow = {
      gpus: 8,
      status: 'interrupted',
      reason: 'interrupted (Ctrl-C) before this size was simulated',
    };
    const rows = withScaling([{ gpus: 4, status: 'infeasible', reason: 'x' }, cut, ok(16, 180), ok(32, 320)]);
    expect(rows[1].speedup).toBeUndefined();
    expect(rows[2]).toMatchObject({ speedup: 1, efficiency: 1 });
    expect(movedScalingBase(rows)).toBe(16);
    // An interrupted size above the first one simulated moves nothing.
    expect(movedScalingBase(withScaling([ok(8, 100), { ...cut, gpus: 16 }, ok(32, 320)]))).toBeUndefined();
  });

  it('reads GPU lists and doubling ranges', () => {
    expect(parseGpuCounts('8,16,32')).toEqual([8, 16, 32]);
    expect(parseGpuCounts('8..1024')).toEqual([8, 16, 32, 64, 128, 256, 512, 1024]);
    expect(parseGpuCounts('4, 8..16, 12')).toEqual([4, 8, 12, 16]);
    expect(() => parseGpuCounts('8,x')).toThrow(/'x' is not a GPU count/);
    expect(() => parseGpuCounts('64..8')).toThrow(RangeError);
  });
});

describe('scaling table and CSV', () => {
  const rows = withScaling([
    ok(8, 100),
    ok(16, 190, 'oom'),
    { gpus: 12, status: 'infeasible', reason: 'not whole nodes: 12 GPUs, over nodes of 8' },
  ]);

  it('prints a row per size with the reason for infeasible ones and OOM for those that do not fit', () => {
    const cells = scaleTableRows(rows);
    expect(cells[0].slice(0, 1)).toEqual(['8']);
    const col = (name: string) => SCALE_TABLE_HEADER.indexOf(name);
    expect(cells[1][col('fits')]).toBe('OOM');
    expect(cells[1][col('note')]).toBe('short by 10.0 GiB');
    expect(cells[0][col('note')]).toBe('');
    expect(cells[2][col('step time')]).toBe('-');
    expect(cells[2][col('note')]).toContain('not whole nodes');
    // Throughput in tokens and MFU, as the CSV has them.
    expect(cells[0][col('tokens/s')]).toBe('51,200'); // 100 samples/s × 512 tokens
    expect(cells[0][col('MFU')]).toBe('50.0%');
    expect(cells[2][col('MFU')]).toBe('-');
  });

  it('writes a header with the documented columns and one line per scenario and size, quoting commas', () => {
    const csv = scaleCsv([
      { name: 'a', mode: 'strong', tp: 1, pp: 1, rows },
      { name: 'b', mode: 'strong', tp: 1, pp: 1, rows: rows.slice(0, 1) },
    ]);
    const lines = csv.trimEnd().split('\n');
    expect(lines[0]).toBe(SCALE_CSV_COLUMNS.join(','));
    expect(lines[0]).toBe(
      'scenario,mode,gpus,status,nodes,dp,global_batch,step_time_s,samples_per_s,tokens_per_s,' +
        'speedup,efficiency,exposed_comm_share,mfu,memory_bytes_per_gpu,capacity_bytes,fits,reason,' +
        'tp,pp,cp,cp_comm_type,tp_comm_overlap,tp_comm_overlap_sms_proj,' +
        'tp_comm_overlap_sms_fc2,tp_comm_overlap_sms_bulk,speedup_base_gpus,' +
        'error_band_low_pct,error_band_high_pct,error_band_rows,micro_batch',
    );
    expect(lines).toHaveLength(5);
    expect(lines[1].split(',').slice(0, 4)).toEqual(['a', 'strong', '8', 'ok']);
    expect(lines[3]).toMatch(
      /^a,strong,12,infeasible,,,,.*,"not whole nodes: 12 GPUs, over nodes of 8",1,1,1,,false,,,,,,,,$/,
    );
    // The rows with a speedup name the size it is against: the first simulated one, whatever comes before it.
    expect(lines[1].split(',').at(-5)).toBe('8');
    const cut = scaleCsv([
      {
        name: 'c',
        mode: 'strong',
        tp: 1,
        pp: 1,
        rows: withScaling([
          { gpus: 4, status: 'interrupted', reason: 'interrupted (Ctrl-C) before this size was simulated' },
          ok(8, 100),
          ok(16, 180),
        ]),
      },
    ]);
    expect(
      cut
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',').at(-5)),
    ).toEqual(['', '8', '8']);
    expect(lines[3].split(',').length).toBeGreaterThanOrEqual(SCALE_CSV_COLUMNS.length);
  });

  it(
    'writes what each scenario holds fixed on every line: ' +
      'cp_comm_type only with cp > 1, the TP overlap SMs only when on',
    () => {
      const sms = { proj: 24, fc2: 16, bulk: 0 };
      const csv = scaleCsv([
        {
          name: 'ring',
          mode: 'weak',
          tp: 4,
          pp: 2,
          cp: 2,
          cpCommType: 'all_gather',
          tpCommOverlap: true,
          tpCommOverlapSms: sms,
          rows: rows.slice(0, 2),
        },
        { name: 'plain', mode: 'weak', tp: 1, pp: 1, rows: rows.slice(0, 1) },
      ]);
      const [header, ...body] = csv
        .trimEnd()
        .split('\n')
        .map((l) => l.split(','));
      const at = (line: string[], column: string) => line[header.indexOf(column)];
      const fixed = [
        'tp',
        'pp',
        'cp',
        'cp_comm_type',
        'tp_comm_overlap',
        'tp_comm_overlap_sms_proj',
        'tp_comm_overlap_sms_fc2',
        'tp_comm_overlap_sms_bulk',
      ];
      expect(body.map((line) => fixed.map((c) => at(line, c)))).toEqual([
        ['4', '2', '2', 'all_gather', 'true', '24', '16', '0'],
        ['4', '2', '2', 'all_gather', 'true', '24', '16', '0'],
        ['1', '1', '1', '', 'false', '', '', ''],
      ]);
      // The row's own columns keep their places.
      expect(body.map((line) => [at(line, 'scenario'), at(line, 'gpus')])).toEqual([
        ['ring', '8'],
        ['ring', '16'],
        ['plain', '8'],
      ]);
    },
  );
});

describe('scaling chart', () => {
  it("says in the legend when a series' efficiency is against another size than the smallest asked for", () => {
    const svg = parseSvg(
      renderScalingChart({
        series: [{ name: 'cut', rows: withScaling([ok(16, 180), ok(32, 320)]), scalingBaseGpus: 16 }],
        mode: 'strong',
        title: 't',
      }),
    );
    expect(svg.querySelector('g.legend')?.textContent).toContain(
      'cut (efficiency against 16 GPUs, the smallest size done that fits)',
    );
  });

  it('draws a curve per scenario with points only for simulated sizes, hollow when OOM', () => {
    const a = withScaling([
      ok(8, 100),
      ok(16, 190),
      ok(32, 350, 'oom'),
      { gpus: 64, status: 'infeasible', reason: 'x' },
    ]);
    const b = withScaling([ok(8, 50), ok(16, 99)]);
    const root = parseSvg(
      renderScalingChart({
        series: [
          { name: 'a', rows: a },
          { name: 'b', rows: b },
        ],
        title: 't',
        mode: 'strong',
      }),
    );
    const series = [...root.querySelectorAll('g.series')];
    expect(series.map((s) => s.getAttribute('data-name'))).toEqual(['a', 'b']);
    // Two panels (throughput, efficiency): each simulated size appears twice.
    expect(series[0].querySelectorAll('circle.point').length).toBe(6);
    expect(series[0].querySelectorAll('circle.point.oom').length).toBe(2);
    expect(series[0].querySelector('circle.oom')!.getAttribute('fill')).toBe('#fff');
    expect(series[1].querySelectorAll('circle.point').length).toBe(4);
    expect(series[0].querySelectorAll('line.ideal').length).toBe(1);
    const legend = [...root.querySelectorAll('g.legend-item text')].map((t) => t.textContent);
    expect(legend).toEqual(expect.arrayContaining(['a', 'b']));
  });

  it('puts a point further right and higher for more GPUs and more throughput (log axes)', () => {
    const rows = withScaling([ok(8, 100), ok(16, 200), ok(64, 800)]);
    const root = parseSvg(renderScalingChart({ series: [{ name: 'a', rows }], title: 't', mode: 'weak' }));
    const pts = [...root.querySelectorAll('g.series circle.point')]
      .slice(0, 3)
      .map((c) => [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))]);
    // Equal ratios give equal distances on log axes: 8→16 is a third of 8→64.
    expect((pts[1][0] - pts[0][0]) * 3).toBeCloseTo(pts[2][0] - pts[0][0], 0);
    expect(pts[1][1]).toBeLessThan(pts[0][1]);
  });
});
