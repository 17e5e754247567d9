import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type BrowserContext } from 'playwright-core';
import { runCli } from '../../src/cli/main.js';

/**
 * Opens the HTML reports in headless Chromium, as a person would on a laptop (1366 × 768), and checks
 * what a unit test cannot: that the page loads without errors or network requests, every chart is
 * laid out visible with a size, and the timeline has the lanes asked for. Uses Debian's chromium
 * package; no browser is ever downloaded.
 */

const CHROMIUM = '/usr/bin/chromium';
/** Screenshots go to a temporary folder unless `npm run screenshots` asks for the committed ones. */
const SHOTS_DIR = process.env.CLUSTERSIM_SCREENSHOTS_DIR;
let SHOTS: string;
const quiet = { out: () => {}, err: () => {} };

let context: BrowserContext;
let userDataDir: string;
let work: string;

async function clustersim(...args: string[]): Promise<void> {
  const code = await runCli(['node', 'clustersim', ...args], quiet);
  if (code !== 0) throw new Error(`clustersim ${args.join(' ')} exited with ${code}`);
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get update && apt-get install -y chromium)`,
    );
  work = mkdtempSync(join(tmpdir(), 'clustersim-browser-'));
  userDataDir = mkdtempSync(join(tmpdir(), 'clustersim-chromium-profile-'));
  SHOTS = SHOTS_DIR ? resolve(SHOTS_DIR) : join(work, 'screenshots');
  mkdirSync(SHOTS, { recursive: true });
  const full = ['--set', 'simulation.fidelity=full'];
  await clustersim(
    'simulate',
    'scenarios/bert-large-ddp-2node.yaml',
    ...full,
    '--report',
    join(work, 'simulate.html'),
    '--ranks',
    '0,5,8',
    '--streams',
    'compute,comm',
  );
  await clustersim(
    'scale',
    'scenarios/bert-large-ddp-2node.yaml',
    '--gpus',
    '8,16,32',
    '--report',
    join(work, 'scale.html'),
  );
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1366, height: 768 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await context?.close();
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

/**
 * Loads a report and takes a full-page screenshot (JPEG, to keep committed files small) at `screenshot`;
 * returns the page and what went wrong on the way (console errors, page errors, network requests).
 */
async function open(file: string, screenshot: string) {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:')) return route.continue();
    problems.push(`network request: ${url}`);
    return route.abort();
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  await page.screenshot({ path: screenshot, fullPage: true, type: 'jpeg', quality: 80 });
  expect(statSync(screenshot).size).toBeGreaterThan(10_000);
  return { page, problems };
}

async function expectChartsVisible(page: Awaited<ReturnType<typeof open>>['page'], atLeast: number): Promise<void> {
  const svgs = await page.locator('svg').all();
  expect(svgs.length).toBeGreaterThanOrEqual(atLeast);
  for (const svg of svgs) {
    await expect.poll(() => svg.isVisible()).toBe(true);
    const box = await svg.boundingBox();
    expect(box!.width).toBeGreaterThan(100);
    expect(box!.height).toBeGreaterThan(50);
  }
  // Readable on a laptop: nothing sticks out sideways.
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
  );
  expect(overflow).toBeLessThanOrEqual(0);
  // Nor inside: no table or picture scrolls sideways in its box (issue 26, item 13: the scale table did, and an
  // 8-stage memory chart of 1,500 px had its legend cut).
  const sideways = await page.evaluate(() =>
    [...document.querySelectorAll('.wrap, figure')]
      .filter((e) => e.scrollWidth > e.clientWidth + 1)
      .map((e) => `${e.tagName.toLowerCase()}.${e.className} ${e.scrollWidth} > ${e.clientWidth}`),
  );
  expect(sideways).toEqual([]);
}

describe('HTML reports in Chromium', () => {
  it('simulate report: no errors, charts visible, one timeline lane per rank and stream asked for', async () => {
    const { page, problems } = await open(join(work, 'simulate.html'), join(work, 'simulate.jpg'));
    expect(problems).toEqual([]);
    await expectChartsVisible(page, 2);
    expect(await page.locator('svg.timeline g.lane').count()).toBe(3 * 2);
    const laneBox = await page.locator('svg.timeline g.lane').first().boundingBox();
    expect(laneBox!.height).toBeGreaterThan(5);
    expect(await page.locator('svg.timeline rect.span').count()).toBeGreaterThan(20);
    expect(await page.locator('svg.memory-chart rect.segment').count()).toBeGreaterThan(3);
    await page.close();
  });

  it('scale report: no errors, curves, tables, timeline and memory chart visible', async () => {
    const { page, problems } = await open(join(work, 'scale.html'), join(work, 'scale.jpg'));
    expect(problems).toEqual([]);
    await expectChartsVisible(page, 3);
    expect(await page.locator('svg.scaling-chart circle.point').count()).toBe(2 * 3);
    expect(await page.locator('table.scale tr').count()).toBe(1 + 3);
    await page.close();
  });

  it(
    'committed example reports: no errors, charts visible, ' + 'lanes as their timelines say; screenshots taken',
    async () => {
      const pages = readdirSync('reports').filter((f) => f.endsWith('.html'));
      expect(pages.length).toBeGreaterThan(0);
      for (const f of pages) {
        const { page, problems } = await open(resolve('reports', f), join(SHOTS, f.replace(/\.html$/, '.jpg')));
        expect(problems, f).toEqual([]);
        await expectChartsVisible(page, 2);
        const tl = page.locator('svg.timeline').first();
        const ranks = (await tl.getAttribute('data-ranks'))!.split(',').length;
        const streams = (await tl.getAttribute('data-streams'))!.split(',').length;
        expect(await tl.locator('g.lane').count(), f).toBe(ranks * streams);
        await page.close();
      }
    },
  );
});
