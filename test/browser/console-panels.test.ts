import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, killAll, startApi, type ServiceProcess } from '../faults/support.js';

/**
 * The console with a job of many series, in a real headless Chromium against a real service
 * process: a long upload of 4 industries (vega-datasets' unemployment, 48 months each, the last 6 empty)
 * trains per series; the page then offers a series picker that drives the chart's series= and filters
 * the forecast table, and its leaderboard says how often each family won.
 */

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');
const INDUSTRIES = ['Finance', 'Construction', 'Mining and Extraction', 'Information'];

function panelCsv(): string {
  const require = createRequire(import.meta.url);
  const file = path.join(path.dirname(require.resolve('vega-datasets')), '..', 'data', 'unemployment-across-industries.json');
  const rows = JSON.parse(readFileSync(file, 'utf8')) as { series: string; year: number; month: number; rate: number }[];
  const lines = ['series,year,month,rate'];
  for (const name of [...INDUSTRIES].sort()) {
    rows
      .filter((r) => r.series === name)
      .slice(0, 48)
      .forEach((r, i) => lines.push(`${name},${r.year},${r.month},${i < 42 ? r.rate : ''}`));
  }
  return `${lines.join('\n')}\n`;
}

const cells = (tab: Page, selector: string) =>
  tab.locator(selector).evaluateAll((rows: any[]) => rows.map((r) => Array.from(r.children as ArrayLike<{ textContent: string | null }>).map((c) => c.textContent ?? '')));

describe.skipIf(!hasChromium)('console with a job of many series', () => {
  let api: ServiceProcess;
  let browser: Browser | undefined;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mtcs-console-panels-data-'));
  const files = mkdtempSync(path.join(os.tmpdir(), 'mtcs-console-panels-files-'));

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    api = await startApi({ databaseUrl: '', env: { DATA_DIR: dataDir, WORKERS: '1' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  });

  afterAll(async () => {
    await browser?.close();
    await killAll();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  });

  it('picks a series for the chart and the forecast table, and counts the wins per family', async () => {
    const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
    const tab = await context.newPage();
    const problems: string[] = [];
    tab.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    tab.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    const charts: string[] = [];
    tab.on('response', (response) => {
      if (response.url().includes('/charts.php')) charts.push(decodeURIComponent(new URL(response.url()).search));
    });

    await tab.goto(`${api.baseUrl}/console/`);
    await tab.fill('#email', ADMIN_EMAIL);
    await tab.fill('#password', ADMIN_PASSWORD);
    await tab.locator('#login-form button[type=submit]').click();
    await expect.poll(() => tab.locator('body').getAttribute('data-state'), { timeout: 15_000 }).toBe('signed-in');
    const file = path.join(files, 'unemployment.csv');
    writeFileSync(file, panelCsv());
    await tab.locator('#csv').setInputFiles(file);
    await tab.locator('#create').click();
    await expect.poll(() => tab.locator('#results').getAttribute('data-ready'), { timeout: 110_000 }).toBe('true');

    // The picker: the chart's default (all 4 here), then every series in upload order (sorted by key here).
    expect(await tab.locator('#series-picker').isVisible()).toBe(true);
    expect(await tab.locator('#series option').allTextContents()).toEqual(['All 4 series', 'Construction', 'Finance', 'Information', 'Mining and Extraction']);
    expect(await tab.locator('#series-hint').textContent()).toMatch(/^4 series keyed by series; 42 known rows each\./);

    // The leaderboard opens with how often each family won, over the 4 series.
    const wins = tab.locator('#leaderboard table').first();
    expect(await wins.locator('caption').textContent()).toBe('How often each family won: 4 series x 1 output, each chosen on its own backtest');
    const won = await cells(tab, '#leaderboard table:first-of-type tbody tr');
    expect(won.reduce((sum, row) => sum + Number(row[1]), 0)).toBe(4);

    // Unpicked: the chart of every series, the table of every forecast row (4 x 6).
    await expect.poll(() => tab.locator('#chart').evaluate((img: any) => img.complete && img.naturalWidth), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(charts[0]).not.toContain('series=');
    expect(await tab.locator('#forecast tbody tr').count()).toBe(24);

    // Finance picked: its chart, its 6 rows, its own winner under the chart.
    await tab.locator('#series').selectOption({ label: 'Finance' });
    await expect.poll(() => tab.locator('#forecast tbody tr').count()).toBe(6);
    const rows = await cells(tab, '#forecast tbody tr');
    expect(rows.map((r) => r[0])).toEqual(Array(6).fill('Finance'));
    expect(await tab.locator('#forecast caption').textContent()).toMatch(/^First rows of the forecast of Finance \(6 rows;/);
    await expect.poll(() => charts.at(-1)).toContain('series=Finance');
    await expect.poll(() => tab.locator('#chart-caption').textContent(), { timeout: 30_000 }).toMatch(/^Finance: rate: \S+, backtest MAE [\d.]+ \(its best naive \S+ [\d.]+\)$/);
    expect(await tab.locator('#chart').getAttribute('alt')).toContain('of series Finance');
    await tab.screenshot({ path: path.join(ARTIFACTS, 'console-panels.png'), fullPage: true });

    // Back to all: the whole table again.
    await tab.locator('#series').selectOption({ index: 0 });
    await expect.poll(() => tab.locator('#forecast tbody tr').count()).toBe(24);
    expect(problems).toEqual([]);
    await context.close();
  });
});
