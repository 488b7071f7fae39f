/**
 * The forecasting engine (model families, backtests, selection, intervals) seen through the API: real
 * service (app.inject), real worker-thread training runner, real database. What a user uploads, what comes
 * back, and how it is explained.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainingContext, type forecastJobs, type Row } from '../support/forecast-jobs.js';
import { CURRENT, OLDER, createTestContext, form, type TestContext, type TestUser } from '../support/helper.js';

let ctx: TestContext;
let user: TestUser;
let jobs: ReturnType<typeof forecastJobs>;
let jobWithData: typeof jobs.jobWithData, jobStatus: typeof jobs.jobStatus, stat: typeof jobs.stat, statusRecords: typeof jobs.statusRecords;
let finished: typeof jobs.finished, output: typeof jobs.output, advance: typeof jobs.advance;
const TZ = 'Europe/Madrid';
/** Engine runs share two loaded cores with other suites: allow minutes, not the default minute. */
const ENGINE_TIMEOUT = 240_000;

/** A deterministic generator, so every run of the suite sees the same series. */
function lcg(seed: number) {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

/** y = 2x + 1 for x = 1..28, then x = 29 and 30 left empty to forecast. */
const LINE = `x,y\n${Array.from({ length: 30 }, (_, i) => `${i + 1},${i < 28 ? 2 * (i + 1) + 1 : ''}`).join('\n')}\n`;

/** Monthly trend plus season plus a little noise: `known` months, then `hidden` months left empty. */
function trendSeason(known: number, hidden: number) {
  const rand = lcg(42);
  const lines = ['year,month,sales'];
  const truth: number[] = [];
  const values: number[] = [];
  for (let t = 0; t < known + hidden; t++) {
    const month = (t % 12) + 1;
    const y = 200 + 1.5 * t + 15 * Math.sin((2 * Math.PI * (month - 1)) / 12) + 8 * Math.cos((2 * Math.PI * (month - 1)) / 12) + (rand() - 0.5) * 2;
    const cell = y.toFixed(2);
    values.push(Number(cell));
    if (t >= known) truth.push(Number(cell));
    lines.push(`${2000 + Math.floor(t / 12)},${month},${t < known ? cell : ''}`);
  }
  return { csv: `${lines.join('\n')}\n`, truth, known: values.slice(0, known) };
}

/** A long daily series with a covariate: enough work that an abort lands while the backtest runs. */
function longDaily(days: number) {
  const rand = lcg(7);
  const lines = ['year,month,day,temp,load'];
  const start = Date.UTC(1980, 0, 1);
  for (let i = 0; i < days; i++) {
    const d = new Date(start + i * 86_400_000);
    const temp = 15 + 10 * Math.sin((2 * Math.PI * i) / 365.25) + (rand() - 0.5) * 4;
    const load = 500 + 0.02 * i + 3 * temp + 20 * ((i % 7) >= 5 ? -1 : 1) + (rand() - 0.5) * 10;
    lines.push(`${d.getUTCFullYear()},${d.getUTCMonth() + 1},${d.getUTCDate()},${temp.toFixed(2)},${i < days - 30 ? load.toFixed(2) : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Half-hourly electricity-like load (a sub-daily spacing, its seasons read from the data): a daily shape,
 * quieter weekends, a little noise; `days` days from Monday 2000-06-05 00:00 in one `timestamp` column, the
 * last day left empty.
 */
function halfHourly(days: number) {
  const rand = lcg(11);
  const lines = ['timestamp,load'];
  const values: number[] = [];
  const start = Date.UTC(2000, 5, 5);
  for (let i = 0; i < days * 48; i++) {
    const d = new Date(start + i * 1_800_000);
    const hour = i % 48 / 2;
    const weekend = d.getUTCDay() === 0 || d.getUTCDay() === 6;
    const load = (weekend ? 300 : 400) + 120 * Math.sin((2 * Math.PI * (hour - 9)) / 24) + 40 * Math.sin((4 * Math.PI * hour) / 24) + (rand() - 0.5) * 30;
    values.push(Number(load.toFixed(1)));
    const stamp = d.toISOString().slice(0, 19).replace('T', ' ');
    lines.push(`${stamp},${i < (days - 1) * 48 ? load.toFixed(1) : ''}`);
  }
  return { csv: `${lines.join('\n')}\n`, values, known: (days - 1) * 48 };
}

const mae = (predicted: number[], truth: number[]) => predicted.reduce((s, p, i) => s + Math.abs(p - truth[i]!), 0) / truth.length;

let close: () => Promise<void>;

beforeAll(async () => {
  ({ ctx, user, jobs, close } = await trainingContext(TZ, ENGINE_TIMEOUT));
  ({ jobWithData, jobStatus, stat, statusRecords, finished, output, advance } = jobs);
}, 60_000);

afterAll(async () => {
  await close?.();
});

describe('forecasting engine through the API', () => {
  it('extends a straight line: 28 rows of y = 2x + 1 forecast 59 and 61 at x = 29 and 30', { timeout: ENGINE_TIMEOUT }, async () => {
    const { jobId } = await jobWithData(LINE);
    await finished(jobId);
    const rows = await output(jobId);
    expect(rows.map((r) => r.x)).toEqual(['29', '30']);
    expect(Math.abs(Number(rows[0]!.y) - 59)).toBeLessThan(0.5);
    expect(Math.abs(Number(rows[1]!.y) - 61)).toBeLessThan(0.5);
  });

  describe('a monthly series with trend and season (96 known months, 12 hidden)', () => {
    const series = trendSeason(96, 12);
    let job: { jobId: number; trainingId: number };
    let rows: Row[];

    beforeAll(async () => {
      job = await jobWithData(series.csv);
      await finished(job.jobId);
      rows = await output(job.jobId);
    }, ENGINE_TIMEOUT);

    it('beats seasonal naive on the hidden rows', () => {
      expect(rows).toHaveLength(12);
      const predicted = rows.map((r) => Number(r.sales));
      const seasonalNaive = series.truth.map((_, i) => series.known[series.known.length - 12 + i]!);
      const ours = mae(predicted, series.truth);
      const naive = mae(seasonalNaive, series.truth);
      // The trend alone moves each month 18 above its value a year earlier.
      expect(naive).toBeGreaterThan(10);
      expect(ours).toBeLessThan(naive / 2);
    });

    it('stores 80% and 95% intervals around each forecast, shown only with intervals=1', async () => {
      expect(Object.keys(rows[0]!)).toEqual(['year', 'month', 'sales']);
      const bounded = await output(job.jobId, '&intervals=1');
      expect(Object.keys(bounded[0]!)).toEqual(['year', 'month', 'sales', 'sales_lo80', 'sales_hi80', 'sales_lo95', 'sales_hi95']);
      bounded.forEach((r, i) => {
        const [lo95, lo80, forecast, hi80, hi95] = [r.sales_lo95, r.sales_lo80, r.sales, r.sales_hi80, r.sales_hi95].map(Number);
        expect(forecast).toBe(Number(rows[i]!.sales));
        expect([lo95, lo80, forecast, hi80, hi95].every(Number.isFinite)).toBe(true);
        expect(lo95).toBeLessThanOrEqual(lo80!);
        expect(lo80).toBeLessThanOrEqual(forecast!);
        expect(forecast).toBeLessThanOrEqual(hi80!);
        expect(hi80).toBeLessThanOrEqual(hi95!);
      });
      // An interval that never widens would not be one: the 95% band is wider than nothing.
      expect(bounded.some((r) => Number(r.sales_hi95) > Number(r.sales_lo95))).toBe(true);
    });

    it('explains the choice in the status record and in GET /jobs_progress progress=2', async () => {
      const s = await stat(job.jobId);
      expect(s.Status).toBe('3');
      expect(s.Selection).not.toBeNull();
      const selection = s.Selection!;
      expect(selection.modelFamily).toBe('auto');
      expect(selection.scheme).toBe('rolling-origin');
      expect(selection.frequency).toBe('monthly');
      expect(selection.horizon).toBe(12);
      const [sales] = selection.outputs;
      expect(sales!.column).toBe('sales');
      expect(sales!.error).toBeLessThanOrEqual(sales!.baseline.error);
      expect(sales!.candidates.length).toBeGreaterThan(1);
      for (const text of [s.Explanation, (await statusRecords(job.jobId))[0]!.text]) {
        expect(text).toContain(`sales: ${sales!.chosen}`);
        expect(text).toContain(`best naive ${sales!.baseline.name}`);
        expect(text).toContain('rolling-origin backtest');
        expect(text).toContain('horizon 12, frequency monthly');
      }
      // The figures' fragment that bench/train parses is still there.
      expect((await statusRecords(job.jobId))[0]!.text).toMatch(/hold-out of \d+ rows: MAE [^,]+, RMSE [^,]+, MSE [^,]+,/);
    });

    it('gives the same forecast for the same upload (determinism)', { timeout: ENGINE_TIMEOUT }, async () => {
      const again = await jobWithData(series.csv);
      await finished(again.jobId);
      expect(await output(again.jobId, '&intervals=1')).toEqual(await output(job.jobId, '&intervals=1'));
    });

    it('predicts identically after a restart (a new app instance on the same database, POST /forecasts.php)', async () => {
      const cells = { year: '2009', month: '1' };
      const post = (c: TestContext) => c.request({ method: 'POST', url: `${OLDER}/forecasts.php?tz=${TZ}`, ...form({ session: user.session, job_id: job.jobId, ...cells }) });
      expect((await post(ctx)).envelope).toEqual({ status: 0, data: 'success' });
      const before = await output(job.jobId);
      expect(before).toHaveLength(1);
      expect(Number.isFinite(Number(before[0]!.sales))).toBe(true);
      const restarted = await createTestContext({ database: ctx.database });
      try {
        expect((await post(restarted)).envelope).toEqual({ status: 0, data: 'success' });
      } finally {
        await restarted.close();
      }
      expect(await output(job.jobId)).toEqual(before);
      // PUT /data period moves that stored forecast ahead, whatever model made it.
      const moved = await ctx.request({ method: 'PUT', url: `${CURRENT}/data.php`, ...form({ session: user.session, job_id: job.jobId, output: 1, period: 'P1M' }) });
      expect(moved.envelope.status).toBe(0);
      expect((await output(job.jobId))[0]).toEqual({ ...before[0], month: '2' });
    });
  });

  describe('a half-hourly series with daily and weekly seasons (16 days known, the 17th hidden)', () => {
    const series = halfHourly(17);
    let jobId: number;
    let rows: Row[];

    beforeAll(async () => {
      ({ jobId } = await jobWithData(series.csv));
      await finished(jobId);
      rows = await output(jobId);
    }, ENGINE_TIMEOUT);

    it('forecasts every empty row, closer than the value a week before', () => {
      expect(rows).toHaveLength(48);
      expect(rows[0]!.timestamp).toBe('2000-06-21 00:00:00');
      expect(rows[47]!.timestamp).toBe('2000-06-21 23:30:00');
      const predicted = rows.map((r) => Number(r.load));
      expect(predicted.every(Number.isFinite)).toBe(true);
      const truth = series.values.slice(series.known);
      const weekAgo = truth.map((_, i) => series.values[series.known - 336 + i]!);
      expect(mae(predicted, truth)).toBeLessThan(mae(weekAgo, truth));
      // Not a flat line: the forecast swings with the day as the history does.
      expect(Math.max(...predicted) - Math.min(...predicted)).toBeGreaterThan(150);
    });

    it('says in the status record which spacing and periods it found', async () => {
      const s = await stat(jobId);
      expect(s.Selection).toMatchObject({ frequency: 'half-hourly', season: 48, periods: [48, 336], horizon: 48 });
      for (const text of [s.Explanation, (await statusRecords(jobId))[0]!.text]) {
        expect(text).toContain('frequency half-hourly (season 48; periods 48, 336)');
      }
    });

    it('draws the chart on a time-of-day axis', async () => {
      const res = await ctx.app.inject({ method: 'GET', url: `${CURRENT}/charts.php?session=${user.session}&job_id=${jobId}&format=svg&history=300` });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
      expect(res.body).toMatch(/>\d\d (May|Jun) \d\d:\d\d</);
    });
  });

  it('ModelFamily=network trains the legacy single network, and says so', { timeout: ENGINE_TIMEOUT }, async () => {
    const { jobId } = await jobWithData(LINE, { fields: 'ModelFamily', params: 'network' });
    await finished(jobId);
    const rows = await output(jobId);
    expect(rows.map((r) => r.x)).toEqual(['29', '30']);
    expect(rows.every((r) => Number.isFinite(Number(r.y)))).toBe(true);
    // The legacy network publishes no intervals.
    expect(Object.keys((await output(jobId, '&intervals=1'))[0]!)).toEqual(['x', 'y']);
    const s = await stat(jobId);
    expect(s.Selection?.modelFamily ?? 'network').toBe('network');
    const text = (await statusRecords(jobId))[0]!.text;
    expect(text).toContain('model family network');
    expect(text).not.toContain('model family auto');
    const jobs = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs.php?session=${user.session}&tz=${TZ}&job_id=${jobId}` });
    expect((jobs.envelope.data[0] as { Nets: string }).Nets).toMatch(/^\d+(-\d+)+$/);
  });

  it('aborts within a second while the backtest runs', { timeout: ENGINE_TIMEOUT }, async () => {
    const { jobId } = await jobWithData(longDaily(20_000));
    const deadline = Date.now() + 120_000;
    while ((await jobStatus(jobId)) !== '2' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    while ((await advance(jobId)) <= 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // Mid-run: the backtest windows are the first three quarters of the work (3 window fits + 1 refit per
    // family), and no selection has been published yet.
    expect(await advance(jobId)).toBeLessThan(100);
    expect(await jobStatus(jobId)).toBe('2');
    expect((await stat(jobId)).Selection).toBeNull();
    const abort = await ctx.request({ method: 'POST', url: `${CURRENT}/job_aborts.php?session=${user.session}`, ...form({ job_id: jobId }) });
    expect(abort.envelope).toEqual({ status: 0, data: 'success' });
    const abortedAt = Date.now();
    let closed = false;
    while (!closed && Date.now() - abortedAt < 1000) {
      closed = (await statusRecords(jobId))[0]?.status === '3';
      if (!closed) await new Promise((r) => setTimeout(r, 50));
    }
    expect(closed).toBe(true);
    expect(await jobStatus(jobId)).toBe('5');
    const frozen = await advance(jobId);
    await new Promise((r) => setTimeout(r, 700));
    expect(await advance(jobId)).toBe(frozen);
  });
});
