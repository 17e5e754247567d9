import { describe, expect, it } from 'vitest';
import { JSDOM } from 'jsdom';
import { simulateReportHtml } from '../../src/report/reports.js';
import { defaultRanks, pipelineStageRanks, usedStreams } from '../../src/report/ranks.js';
import { bertRun } from './fixtures.js';

/** Longest text a cell may keep on one line outside a scrolling box: about what a 360 px phone screen holds. */
const PHONE_CHARS = 40;

describe('HTML report on a narrow screen', () => {
  it('lets every long cell outside a scrolling box wrap, so the page is never wider than the screen', () => {
    const { scenario, run, label } = bertRun();
    const ranks = defaultRanks({
      trace: run.trace,
      gpusPerNode: scenario.cluster.node.gpusPerNode,
      stages: pipelineStageRanks(scenario.parallel),
    });
    const page = simulateReportHtml(
      { label, trace: run.trace, result: run.result, ranks, streams: usedStreams(run.trace) },
      'test',
    );
    const { window } = new JSDOM(page);
    const cells = [...window.document.querySelectorAll('td, th')].filter(
      (c) => (c.textContent ?? '').length > PHONE_CHARS && !c.closest('.wrap'),
    );
    // The summary's bottleneck line is one of them (about 90 characters).
    expect(cells.length).toBeGreaterThan(0);
    for (const c of cells) expect(window.getComputedStyle(c).whiteSpace, c.textContent ?? '').not.toBe('nowrap');
  });
});
