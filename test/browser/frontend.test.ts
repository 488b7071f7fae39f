import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, killAll, startApi, type ServiceProcess } from '../faults/support.js';

/**
 * A legacy front end in a real headless Chromium: a static page on one origin calls the real service
 * (its own process, embedded PGlite) on another, with fetch + FormData only. It proves CORS (simple and
 * preflighted requests), multipart uploads built by a browser, and the envelope, end to end.
 */

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`browser test skipped: ${CHROMIUM} is missing (.ci/run installs Debian's chromium when run as root)`);

const PAGE = readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'page', 'index.html'));

/** Serves the page on 127.0.0.1 at a port of its own: another port is another origin. */
async function servePage(html: Buffer | string): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    if (request.url === '/favicon.ico') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function closeServer(server: Server | undefined) {
  return new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
}

/** OPTIONS replies the service counted in its Prometheus metrics (CORS preflights). */
async function preflightsServed(api: string): Promise<number> {
  const text = await (await fetch(`${api}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('mtcs_http_requests_total{') && line.includes('method="OPTIONS"') && line.includes('status="204"'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

describe.skipIf(!hasChromium)('legacy front end in headless Chromium, served from another origin', () => {
  let page: { origin: string; server: Server } | undefined;
  let foreign: { origin: string; server: Server } | undefined;
  let api: ServiceProcess;
  let browser: BrowserContext | undefined;
  const profile = mkdtempSync(path.join(os.tmpdir(), 'mtcs-chromium-'));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mtcs-browser-data-'));
  const email = `browser-${Date.now()}@front.example`;
  const password = 'Browser-Passw0rd';

  beforeAll(async () => {
    page = await servePage(PAGE);
    foreign = await servePage('<!doctype html><title>Another site</title>');
    // Empty DATABASE_URL: the embedded PGlite in a temporary DATA_DIR.
    api = await startApi({ databaseUrl: '', env: { DATA_DIR: dataDir, WORKERS: '1', CORS_ORIGINS: page.origin } });
    await new Client(api.baseUrl).ok('POST', 'users', { name: 'Legacy', lastname: 'Browser', email, password, phonenumber: '600000000' });
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await killAll();
    await closeServer(page?.server);
    await closeServer(foreign?.server);
    rmSync(profile, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('logs in, subscribes, uploads a CSV, follows the training to 100 and renders the forecast', async () => {
    const tab = await browser!.newPage();
    const methods = new Set<string>();
    let uploadType = '';
    tab.on('request', (request) => {
      methods.add(request.method());
      if (request.method() === 'POST' && request.url().includes('/data.php')) uploadType = request.headers()['content-type'] ?? '';
    });
    const query = new URLSearchParams({ api: api.baseUrl, email, password });
    await tab.goto(`${page!.origin}/index.html?${query.toString()}`);

    const body = tab.locator('body');
    await expect.poll(() => body.getAttribute('data-state'), { timeout: 90_000, interval: 250 }).not.toBe('running');
    expect(await tab.locator('#error').textContent(), await tab.locator('#log').textContent() ?? '').toBe('');
    expect(await body.getAttribute('data-state')).toBe('done');

    // The PATCH went through (after its preflight), and the DELETE ended the session the page used.
    await expect.poll(() => tab.locator('#name').textContent()).toBe('Browser');
    expect(await tab.locator('#logout').textContent()).toMatch(/^signed out: GET \/sessions\.php: .*session/i);
    expect(await tab.locator('#advance').textContent()).toBe('100');
    expect(await preflightsServed(api.baseUrl)).toBeGreaterThanOrEqual(2);
    expect([...methods]).toEqual(expect.arrayContaining(['GET', 'POST', 'PATCH', 'DELETE']));
    expect(uploadType).toMatch(/^multipart\/form-data; boundary=/);

    // The rendered table is exactly the service's forecast of the three hidden months.
    const header = await tab.locator('#forecast thead th').allTextContents();
    const cells = await Promise.all((await tab.locator('#forecast tbody tr').all()).map((row) => row.locator('td').allTextContents()));
    const reader = new Client(api.baseUrl);
    await reader.login(email, password);
    const jobId = Number(await tab.locator('#job').textContent());
    const forecast = (await reader.ok('GET', 'data', { job_id: jobId, output: 1 })) as Record<string, string>[];
    expect(forecast).toHaveLength(3);
    expect(header).toEqual(Object.keys(forecast[0]!));
    expect(cells).toEqual(forecast.map((row) => header.map((column) => String(row[column]))));
    expect(cells.map((row) => [row[header.indexOf('year')], row[header.indexOf('month')]])).toEqual([
      ['2005', '1'],
      ['2005', '2'],
      ['2005', '3'],
    ]);
    for (const row of cells) expect(Number(row[header.indexOf('demand')])).toBeGreaterThan(0);
  });

  it('is refused by the browser from an origin the service does not allow', async () => {
    const tab = await browser!.newPage();
    await tab.goto(`${foreign!.origin}/`);
    const outcome = await tab.evaluate(async (api) => {
      try {
        await fetch(`${api}/api/202203010900/users.php`, { method: 'PATCH', body: new FormData() });
        return 'answered';
      } catch (error) {
        return (error as Error).name;
      }
    }, api.baseUrl);
    expect(outcome).toBe('TypeError');
  });
});
