/**
 * The README's pictures (issue 24), made from the real thing: `npm run screenshots` starts the service on a
 * temporary DATA_DIR (embedded PGlite, one training thread), drives the console in headless Chromium
 * through a real upload (300 months of Mauna Loa CO2 from vega-datasets, the last 24 to forecast), and
 * writes docs/img/console.png (the page) and docs/img/chart.png (the chart resource's PNG).
 * CHROMIUM overrides the browser (default /usr/bin/chromium).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { co2Csv } from '../test/browser/co2.js';
import { Client, killAll, ROOT, startApi, waitFor } from '../test/faults/support.js';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const OUT = path.join(ROOT, 'docs', 'img');
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function main() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mtcs-screenshots-data-'));
  const files = mkdtempSync(path.join(os.tmpdir(), 'mtcs-screenshots-files-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const api = await startApi({ databaseUrl: '', env: { DATA_DIR: dataDir, WORKERS: '1' } });
    const email = 'ana@example.com';
    const password = 'Screenshot-Passw0rd';
    await new Client(api.baseUrl).ok('POST', 'users', { name: 'Ana', lastname: 'García', email, password, phonenumber: '600000000' });

    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, deviceScaleFactor: 1 });
    const tab = await context.newPage();
    await tab.goto(`${api.baseUrl}/console/`);
    await tab.fill('#email', email);
    await tab.fill('#password', password);
    await tab.click('button[type=submit]');
    await waitFor('the sign-in', async () => ((await tab.locator('body').getAttribute('data-state')) === 'signed-in' ? true : undefined));

    const csv = path.join(files, 'co2-monthly.csv');
    writeFileSync(csv, co2Csv(300, 24));
    await tab.fill('#description', 'Mauna Loa CO2, next 24 months');
    await tab.locator('#csv').setInputFiles(csv);
    await tab.click('#create');
    await waitFor('the forecast', async () => ((await tab.locator('#results').getAttribute('data-ready')) === 'true' ? true : undefined), 120_000, 250);
    const problem = await tab.locator('#message').textContent();
    if (problem) throw new Error(`the console reported: ${problem}`);
    await waitFor('the chart', async () => ((await tab.locator('#chart').evaluate((img: { complete: boolean; naturalWidth: number }) => img.complete && img.naturalWidth > 0)) ? true : undefined));

    mkdirSync(OUT, { recursive: true });
    // The page from the top to the end of the leaderboard: sign-in state, upload, progress, chart, candidates.
    const box = await tab.locator('#intervals').boundingBox();
    const height = Math.ceil((box?.y ?? 1400) + (box?.height ?? 0) + 16);
    await tab.screenshot({ path: path.join(OUT, 'console.png'), fullPage: true, clip: { x: 0, y: 0, width: 1200, height } });

    const jobId = Number(await tab.locator('#job-id').textContent());
    const owner = new Client(api.baseUrl);
    await owner.login(email, password);
    const query = new URLSearchParams({ session: owner.session!, job_id: String(jobId), format: 'png', width: '900', height: '320' });
    const res = await fetch(`${api.baseUrl}/api/202203010900/charts.php?${query.toString()}`);
    const png = Buffer.from(await res.arrayBuffer());
    if (!png.subarray(0, 8).equals(PNG)) throw new Error(`charts.php format=png did not answer a PNG: ${png.subarray(0, 300).toString()}`);
    writeFileSync(path.join(OUT, 'chart.png'), png);
    console.log(`wrote ${path.relative(ROOT, path.join(OUT, 'console.png'))} and ${path.relative(ROOT, path.join(OUT, 'chart.png'))} (job ${jobId})`);
  } finally {
    await browser.close();
    await killAll();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  }
}

await main();
