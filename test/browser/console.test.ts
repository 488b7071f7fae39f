import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_EMAIL, ADMIN_PASSWORD, Client, killAll, startApi, type ServiceProcess } from '../faults/support.js';
import { birthsCsv, co2Csv } from './co2.js';

/**
 * The console (/console/) in a real headless Chromium against a real service process on
 * embedded PGlite: a new user creates an account and signs in with the keyboard, uploads a long series and aborts it while it
 * trains (an administrator sees it in the queue meanwhile), then uploads a real monthly series, follows
 * its Advance to 100, sees the chart, the leaderboard and the intervals, and downloads the forecast.
 * Screenshots are kept in test/browser/artifacts/ (git-ignored).
 */

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`browser test skipped: ${CHROMIUM} is missing (.ci/run installs Debian's chromium when run as root)`);

const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'artifacts');
const STATUS = { Running: '2', Finished: '3', Aborted: '5' };

/** Writes the CSV where the file chooser can take it. */
function csvFile(dir: string, name: string, content: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

/** Page errors, console errors and CSP violations: a console that works has none. */
function watchProblems(tab: Page): string[] {
  const problems: string[] = [];
  tab.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  tab.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  return problems;
}

/** Signs in with the keyboard only: focus the e-mail, type, Tab to the password, type, Enter. */
async function signIn(tab: Page, email: string, password: string) {
  await tab.locator('#email').fill('');
  await tab.locator('#email').focus();
  await tab.keyboard.type(email);
  await tab.keyboard.press('Tab');
  expect(await tab.evaluate('document.activeElement.id')).toBe('password');
  await tab.keyboard.type(password);
  await tab.keyboard.press('Enter');
  await expect.poll(() => tab.locator('body').getAttribute('data-state'), { timeout: 15_000 }).toBe('signed-in');
}

/** Chooses the file and presses the submit button from the keyboard; answers the new job's id. */
async function uploadThroughConsole(tab: Page, file: string): Promise<number> {
  const before = await tab.locator('#job-id').textContent();
  await tab.locator('#csv').setInputFiles(file);
  await tab.locator('#create').focus();
  await tab.keyboard.press('Enter');
  await expect.poll(async () => (await tab.locator('#job-id').textContent()) || before, { timeout: 30_000 }).not.toBe(before);
  expect(await tab.locator('#message').isHidden(), (await tab.locator('#message').textContent()) ?? '').toBe(true);
  return Number(await tab.locator('#job-id').textContent());
}

const jobStatus = (tab: Page) => tab.locator('#job').getAttribute('data-status');

describe.skipIf(!hasChromium)('console in headless Chromium, served by the service itself', () => {
  let api: ServiceProcess;
  let browser: Browser | undefined;
  let consumerContext: BrowserContext;
  let adminContext: BrowserContext;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'mtcs-console-data-'));
  const files = mkdtempSync(path.join(os.tmpdir(), 'mtcs-console-files-'));
  const email = `console-${Date.now()}@front.example`;
  const password = 'Console-Passw0rd';

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // Empty DATABASE_URL: the embedded PGlite in a temporary DATA_DIR; one training thread.
    api = await startApi({ databaseUrl: '', env: { DATA_DIR: dataDir, WORKERS: '1' } });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    // Two cookie jars: the consumer's and the administrator's sessions side by side.
    consumerContext = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
    adminContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    await killAll();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  });

  it('serves the page, its script and style with a same-origin content security policy', async () => {
    const page = await fetch(`${api.baseUrl}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'.*script-src 'self'/);
    expect(await page.text()).toContain('<script src="app.js" defer></script>');
    const script = await fetch(`${api.baseUrl}/console/app.js`);
    expect(script.headers.get('content-type')).toMatch(/javascript/);
    expect(script.headers.get('content-security-policy')).toBe(page.headers.get('content-security-policy'));
    const bare = await fetch(`${api.baseUrl}/console`, { redirect: 'manual' });
    expect([bare.status, bare.headers.get('location')]).toEqual([301, '/console/']);
  });

  it('creates an account, signs in, aborts a long training, trains a real series to 100, shows chart, leaderboard and intervals, downloads the CSV', async () => {
    const tab = await consumerContext.newPage();
    const problems = watchProblems(tab);
    const chartReplies: { url: string; type: string }[] = [];
    tab.on('response', (response) => {
      if (response.url().includes('/charts.php')) chartReplies.push({ url: response.url(), type: response.headers()['content-type'] ?? '' });
    });
    await tab.goto(`${api.baseUrl}/console/`);
    // A new user creates the account from the page (POST /users), then signs in.
    await tab.locator('#register summary').click();
    await tab.fill('#reg-name', 'Console');
    await tab.fill('#reg-lastname', 'User');
    await tab.fill('#reg-email', email);
    await tab.fill('#reg-phone', '600000000');
    await tab.fill('#reg-password', password);
    await tab.locator('#register-form button[type=submit]').click();
    await expect
      .poll(async () => (await tab.locator('#register-status').textContent()) || (await tab.locator('#message').textContent()), { timeout: 20_000 })
      .toBe('Account created: sign in with it above.');
    expect(await tab.locator('#email').inputValue()).toBe(email);
    await signIn(tab, email, password);

    // The session is the httpOnly cookie: the page's script cannot read it and keeps no copy.
    expect(await tab.evaluate('document.cookie')).not.toContain('session=');
    const stored: Record<string, string> = await tab.evaluate('({ ...sessionStorage })');
    expect(Object.values(stored).map((v) => JSON.parse(v))).toEqual([{ id: expect.any(Number), name: 'Console', role: 'consumer' }]);
    expect((await consumerContext.cookies()).find((c) => c.name === 'session')).toMatchObject({ httpOnly: true });

    // 1. A long daily series (7,305 rows), aborted while it trains.
    await tab.evaluate(`{
      const bar = document.getElementById('upload-progress');
      const seen = (window.uploadSeen = []);
      new MutationObserver(() => seen.push(bar.textContent)).observe(bar, { childList: true });
    }`);
    const long = await uploadThroughConsole(tab, csvFile(files, 'births.csv', birthsCsv()));
    const seen: string[] = await tab.evaluate('window.uploadSeen');
    expect(seen.length, 'upload progress events').toBeGreaterThan(0);
    expect(seen.at(-1)).toBe('100%');
    await expect.poll(() => jobStatus(tab), { timeout: 30_000, interval: 100 }).toBe(STATUS.Running);

    // The administrator's console shows it running, with its worker.
    const adminTab = await adminContext.newPage();
    const adminProblems = watchProblems(adminTab);
    await adminTab.goto(`${api.baseUrl}/console/`);
    await signIn(adminTab, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(await adminTab.locator('#admin').isVisible()).toBe(true);
    const queueRow = adminTab.locator('#queue-table tbody tr', { hasText: String(long) }).first();
    await expect.poll(() => queueRow.locator('td').allTextContents(), { timeout: 10_000 }).toEqual([
      'Console User',
      'Running',
      expect.stringMatching(/^\d+(\.\d+)?%$/),
      expect.stringMatching(/\S/),
      expect.stringMatching(/^\d{4}-\d{2}-\d{2} /),
      expect.stringMatching(/^\d{4}-\d{2}-\d{2} /),
    ]);
    expect(await adminTab.locator('#workers li').first().textContent()).toContain(`job ${long}`);
    await adminTab.screenshot({ path: path.join(ARTIFACTS, 'console-admin.png'), fullPage: true });

    expect(await tab.locator('#abort').isEnabled()).toBe(true);
    await tab.locator('#abort').focus();
    await tab.keyboard.press('Enter');
    await expect.poll(() => jobStatus(tab), { timeout: 15_000 }).toBe(STATUS.Aborted);
    expect(await tab.locator('#job-status').textContent()).toBe('Aborted');
    expect(await tab.locator('#abort').isDisabled()).toBe(true);
    expect(await tab.locator('#results').isHidden()).toBe(true);

    // 2. 300 months of Mauna Loa CO2, the last 24 to forecast.
    const job = await uploadThroughConsole(tab, csvFile(files, 'co2.csv', co2Csv(300, 24)));
    expect(job).toBeGreaterThan(long);
    const advances: number[] = [];
    await expect
      .poll(
        async () => {
          advances.push(Number(await tab.locator('#advance-text').textContent()));
          return jobStatus(tab);
        },
        { timeout: 90_000, interval: 100 },
      )
      .toBe(STATUS.Finished);
    expect(advances.at(-1) === 100 || Number(await tab.locator('#advance-text').textContent()) === 100).toBe(true);
    expect(advances.some((a) => a < 100), 'the progress rose to 100').toBe(true);
    expect(advances).toEqual([...advances].sort((a, b) => a - b));
    expect(await tab.locator('#advance').evaluate((bar: any) => bar.value)).toBe(100);
    await expect.poll(() => tab.locator('#results').getAttribute('data-ready'), { timeout: 30_000 }).toBe('true');

    // The chart: the SVG of the chart resource, loaded into the image.
    const chart = tab.locator('#chart');
    await expect.poll(() => chart.evaluate((img: any) => img.complete && img.naturalWidth), { timeout: 30_000 }).toBeGreaterThan(0);
    expect(await chart.isVisible()).toBe(true);
    expect(await chart.getAttribute('alt')).toContain('co2');
    expect(chartReplies.slice(0, 1)).toEqual([{ url: expect.stringMatching(new RegExp(`/api/202203010900/charts\\.php\\?.*job_id=${job}.*format=svg`)), type: expect.stringMatching(/^image\/svg\+xml/) }]);
    expect(await tab.locator('#chart-status').textContent()).toBe('');

    // The leaderboard: the candidates of the backtest, the chosen one marked, ranked by their error.
    const board = tab.locator('#leaderboard table');
    expect(await board.locator('caption').textContent()).toMatch(/^co2: backtest MAE/);
    const ranks = await board.locator('tbody tr').evaluateAll((rows: any[]) => rows.map((r) => Array.from(r.children as ArrayLike<{ textContent: string | null }>).map((c) => c.textContent ?? '')));
    expect(ranks.length).toBeGreaterThanOrEqual(3);
    expect(ranks.filter((r) => r[1]!.includes('(chosen)'))).toHaveLength(1);
    expect(ranks.filter((r) => r[1]!.includes('(best naive)'))).toHaveLength(1);
    const errors = ranks.map((r) => Number(r[3])).filter((e) => Number.isFinite(e));
    expect(errors).toEqual([...errors].sort((a, b) => a - b));

    // The intervals: how often the bands held on the backtest (as the job's explanation states), and every forecast month has both bands.
    const reader = new Client(api.baseUrl);
    await reader.login(email, password);
    const explanation = (await reader.ok('GET', 'jobs_progress', { job_id: job, progress: 2 })).Stat.Explanation as string;
    const held = /co2: [^;]*; intervals on the backtest: 80% band held (\d+%), 95% band held (\d+%) of (\d+) rows/.exec(explanation);
    const intervals = await tab.locator('#intervals tbody tr').evaluateAll((rows: any[]) => rows.map((r) => Array.from(r.children as ArrayLike<{ textContent: string | null }>).map((c) => c.textContent ?? '')));
    expect(intervals).toHaveLength(1);
    expect(intervals[0]!.slice(0, 5)).toEqual(['co2', ...(held ? held.slice(1, 4) : ['n/a', 'n/a', 'n/a']), '24 of 24']);
    expect(Number(intervals[0]![6])).toBeGreaterThan(Number(intervals[0]![5]));

    // The download is the API's forecast with its bounds, as CSV.
    const [download] = await Promise.all([tab.waitForEvent('download'), tab.locator('#download').click()]);
    expect(download.suggestedFilename()).toBe(`forecast-job-${job}.csv`);
    const csv = readFileSync(await download.path(), 'utf8').trim().split(/\r\n/);
    expect(csv[0]).toBe('year,month,co2,co2_lo80,co2_hi80,co2_lo95,co2_hi95');
    const rows = (await reader.ok('GET', 'data', { job_id: job, output: 1, intervals: 1 })) as Record<string, string>[];
    expect(csv.slice(1)).toEqual(rows.map((r) => Object.values(r).join(',')));
    expect(rows).toHaveLength(24);

    await tab.screenshot({ path: path.join(ARTIFACTS, 'console.png'), fullPage: true });
    await chart.screenshot({ path: path.join(ARTIFACTS, 'chart.png') });

    // A chart reply that is the error envelope (as the chart resource answers any refusal) shows its message instead of an image.
    await tab.route('**/charts.php?*', (route) => route.fulfill({ contentType: 'application/json; charset=utf-8', body: JSON.stringify({ status: 1, data: 'Chart unavailable for this test' }) }));
    await tab.getByRole('button', { name: `Open job ${job}` }).click();
    await expect.poll(() => tab.locator('#chart-status').textContent(), { timeout: 15_000 }).toBe('No chart: Chart unavailable for this test');
    expect(await chart.isHidden()).toBe(true);
    expect(await tab.locator('#leaderboard table').count()).toBe(1);
    await tab.unroute('**/charts.php?*');

    // Both jobs are listed; opening the aborted one from the list shows it as it is.
    const listed = await tab.locator('#jobs-table tbody tr th').allTextContents();
    expect(listed).toEqual([String(job), String(long)]);
    await tab.getByRole('button', { name: `Open job ${long}` }).click();
    await expect.poll(() => jobStatus(tab)).toBe(STATUS.Aborted);

    // Sign out ends the session: the cookie no longer opens it.
    await tab.locator('#logout').click();
    await expect.poll(() => tab.locator('body').getAttribute('data-state')).toBe('signed-out');
    await tab.reload();
    await expect.poll(() => tab.locator('body').getAttribute('data-state')).toBe('signed-out');
    expect(await tab.locator('#login').isVisible()).toBe(true);

    expect(problems).toEqual([]);
    expect(adminProblems).toEqual([]);
  });
});
