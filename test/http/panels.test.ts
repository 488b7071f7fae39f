/**
 * Many series in one upload through the API: a long upload keyed by a column is forecast per
 * series with one structure chosen across its series, a wide upload gets every empty value column forecast, a covariate known in the rows to forecast is
 * used and one left empty is never filled with a mean, and series too short for a model say so. Real data
 * (vega-datasets' unemployment by industry and US employment by sector) where the data's shape matters.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainingContext, type forecastJobs, type Row, type Stat } from '../support/forecast-jobs.js';
import { CURRENT, OLDER, form, type TestContext, type TestUser } from '../support/helper.js';
import { industries, VEGA_DATA } from '../support/industries.js';

let ctx: TestContext;
let user: TestUser;
let jobs: ReturnType<typeof forecastJobs>;
const TZ = 'UTC';
const ENGINE_TIMEOUT = 240_000;
const data = (file: string) => readFileSync(join(VEGA_DATA, file), 'utf8');

/** Sets column roles with PUT /data on a finished job and runs it again (PUT /jobs status=1), as a user corrects a run. */
async function restateAndRun(jobId: number, trainingId: number, roles: Record<string, string>) {
  const put = await ctx.request({ method: 'PUT', url: `${CURRENT}/data.php`, ...form({ session: user.session, tz: TZ, job_id: jobId, output: 0, ...roles }) });
  expect(put.envelope.status, String(put.envelope.data)).toBe(0);
  const rerun = await ctx.request({
    method: 'PUT',
    url: `${CURRENT}/jobs.php`,
    ...form({ session: user.session, tz: TZ, training_id: trainingId, job_id: jobId, app_name: 'forecast', status: 1 }),
  });
  expect(rerun.envelope.status, String(rerun.envelope.data)).toBe(0);
  await jobs.finished(jobId);
}

/** Growth per key over the 30 years from 1990, `key0`, `key1` ...: the last 4 years of every series left empty. */
type Growth = (series: number, year: number) => number;
function annualPanel(key: string, series: number, truth: Growth, decimals: number): string {
  const lines = [`${key},year,value`];
  for (let s = 0; s < series; s++) for (let t = 0; t < 30; t++) lines.push(`${key[0]}${s},${1990 + t},${t < 26 ? truth(s, t).toFixed(decimals) : ''}`);
  return `${lines.join('\n')}\n`;
}

/** Every forecast row of annualPanel's upload within `tolerance` (relative) of its truth. */
function expectNearTruth(rows: Row[], key: string, truth: Growth, tolerance: number) {
  for (const row of rows) {
    const s = Number(String(row[key]).slice(1));
    expect(Math.abs(Number(row.value) / truth(s, Number(row.year) - 1990) - 1), `${row[key]} ${row.year}`).toBeLessThan(tolerance);
  }
}

const INDUSTRIES = ['Government', 'Mining and Extraction', 'Construction', 'Manufacturing', 'Wholesale and Retail Trade', 'Finance'];

let close: () => Promise<void>;

beforeAll(async () => {
  ({ ctx, user, jobs, close } = await trainingContext(TZ, ENGINE_TIMEOUT));
}, 60_000);

afterAll(async () => {
  await close?.();
});

describe('a long upload of six industries keyed by a column', () => {
  const panel = industries(INDUSTRIES, 48, 6);
  let rows: Row[];
  let selection: NonNullable<Stat['Selection']>;
  let jobId: number;

  beforeAll(async () => {
    ({ jobId } = await jobs.jobWithData(panel.csv));
    await jobs.finished(jobId);
    rows = await jobs.output(jobId, '&intervals=1');
    selection = (await jobs.stat(jobId)).Selection as NonNullable<Stat['Selection']>;
  }, ENGINE_TIMEOUT);

  it('finds the key and reports the series', () => {
    expect(selection.panel).toMatchObject({ keys: ['industry'], keySource: 'detected', series: 6, shortest: 42, longest: 42 });
    expect(selection.panel?.perSeries.map((s) => s.key[0])).toEqual(INDUSTRIES);
    const wins = Object.values(selection.panel?.wins ?? {}).reduce((a, b) => a + b, 0);
    expect(wins).toBe(6);
    expect(selection.outputs[0]).toMatchObject({ column: 'unemployed', metric: 'MASE' });
  });

  it('chooses one structure across the six series and gives each its own fit of it', () => {
    const [output] = selection.outputs;
    expect(output?.description).toMatch(/ \(chosen across 6 series\); per series over 6 series: \S+ 6$/);
    expect(Object.values(selection.panel?.wins ?? {})).toEqual([6]);
    const chosen = selection.panel?.perSeries.map((s) => s.outputs[0]?.chosen);
    expect(new Set(chosen).size).toBe(1);
    // Each series' own fit: the six series forecast six different months ahead.
    expect(new Set(INDUSTRIES.map((name) => rows.find((r) => r.industry === name)?.unemployed)).size).toBe(6);
  });

  it('answers the rows to forecast as uploaded: key kept, upload order, bands', () => {
    expect(rows).toHaveLength(36);
    expect(rows.map((r) => `${r.industry} ${r.year}-${r.month}`)).toEqual(
      INDUSTRIES.flatMap((name) => ['7', '8', '9', '10', '11', '12'].map((m) => `${name} 2005-${m}`)),
    );
    for (const r of rows) {
      const [lo95, lo80, value, hi80, hi95] = [r.unemployed_lo95, r.unemployed_lo80, r.unemployed, r.unemployed_hi80, r.unemployed_hi95].map(Number);
      expect(Number.isFinite(value)).toBe(true);
      expect(lo95).toBeLessThanOrEqual(lo80 as number);
      expect(lo80).toBeLessThanOrEqual(value as number);
      expect(hi80).toBeLessThanOrEqual(hi95 as number);
    }
  });

  it('forecasts each series on its own scale (within 35% of its own hidden months, for series in the hundreds)', () => {
    for (const name of INDUSTRIES.filter((n) => n !== 'Mining and Extraction')) {
      const mine = rows.filter((r) => r.industry === name).map((r) => Number(r.unemployed));
      const truth = panel.truth.get(name) as number[];
      const level = truth.reduce((a, b) => a + b, 0) / truth.length;
      const mae = mine.reduce((s, v, i) => s + Math.abs(v - (truth[i] as number)), 0) / truth.length;
      expect(mae / level, `${name}: ${mine.join(' ')} against ${truth.join(' ')}`).toBeLessThan(0.35);
    }
  });

  it('predicts a posted row with its own series model (older POST /forecasts), and refuses an unknown series', async () => {
    const post = (cells: Record<string, string>) => ctx.request({ method: 'POST', url: `${OLDER}/forecasts.php?tz=${TZ}`, ...form({ session: user.session, job_id: jobId, ...cells }) });
    expect((await post({ industry: 'Finance', year: '2005', month: '7' })).envelope).toEqual({ status: 0, data: 'success' });
    const [posted] = await jobs.output(jobId);
    const stored = rows.find((r) => r.industry === 'Finance' && r.month === '7');
    expect(posted).toMatchObject({ industry: 'Finance', year: '2005', month: '7', unemployed: stored?.unemployed });
    const unknown = await post({ industry: 'Fishing', year: '2005', month: '7' });
    expect(unknown.envelope.status).toBe(1);
    expect(String(unknown.envelope.data)).toMatch(/industry=Fishing/);
  });
});

describe('a long upload of four countries growing in percent', () => {
  it('is forecast on logarithms, chosen across the series, and keeps each growth rate', { timeout: ENGINE_TIMEOUT }, async () => {
    // 2%, 4%, 6% and 8% a year with a wobble of 1%; the last 4 of 30 years hidden. Drift on the levels falls behind.
    const truth = (s: number, t: number) => 1000 * (s + 1) * (1 + 0.02 * (s + 1)) ** t * (1 + 0.01 * Math.sin(t * (s + 2)));
    const { jobId } = await jobs.jobWithData(annualPanel('country', 4, truth, 2));
    await jobs.finished(jobId);
    const selection = (await jobs.stat(jobId)).Selection;
    expect(selection?.outputs[0]?.chosen).toMatch(/^log_/);
    expect(selection?.outputs[0]?.description).toMatch(/ \(chosen across 4 series\)/);
    const rows = await jobs.output(jobId);
    expect(rows).toHaveLength(16);
    expectNearTruth(rows, 'country', truth, 0.03);
  });
});

describe('a long upload of two regions whose growth fades', () => {
  it("forecasts each on logarithms by its own choice, auto.arima's differencing with AR terms", { timeout: ENGINE_TIMEOUT }, async () => {
    // Growth from 12% (17%) down to 2% a year: an AR(1) in the differences of the logarithms; the last 4 of 30 years hidden.
    const truth = (s: number, t: number) => 500 * (s + 1) * Math.exp(0.02 * t + ((0.1 + 0.05 * s) * (1 - 0.8 ** t)) / 0.2);
    const { jobId } = await jobs.jobWithData(annualPanel('region', 2, truth, 3));
    await jobs.finished(jobId);
    const panel = (await jobs.stat(jobId)).Selection?.panel;
    // Two series choose each their own (fewer than the 4 that choose one structure across them).
    expect(panel?.perSeries.map((s) => s.outputs[0]?.chosen)).toEqual(['log_differenced_ar', 'log_differenced_ar']);
    const rows = await jobs.output(jobId);
    expect(rows).toHaveLength(8);
    expectNearTruth(rows, 'region', truth, 0.005);
  });
});

describe('a wide upload with two value columns empty at the end', () => {
  it('forecasts both columns, and never fills the first one with a mean', { timeout: ENGINE_TIMEOUT }, async () => {
    const lines = data('us-employment.csv').trim().split('\n');
    const header = (lines[0] as string).split(',');
    const [date, construction, manufacturing] = ['month', 'construction', 'manufacturing'].map((c) => header.indexOf(c));
    const body = lines.slice(1, 73).map((line, i, all) => {
      const cells = line.split(',');
      const hide = i >= all.length - 12;
      return `${cells[date as number]},${hide ? '' : cells[construction as number]},${hide ? '' : cells[manufacturing as number]}`;
    });
    const truth = lines.slice(61, 73).map((line) => Number(line.split(',')[construction as number]));
    const { jobId } = await jobs.jobWithData(`date,construction,manufacturing\n${body.join('\n')}\n`);
    await jobs.finished(jobId);
    const rows = await jobs.output(jobId);
    expect(rows).toHaveLength(12);
    const forecast = rows.map((r) => Number(r.construction));
    expect(forecast.every((v) => Number.isFinite(v) && v > 0)).toBe(true);
    expect(rows.every((r) => Number(r.manufacturing) > 0)).toBe(true);
    // A mean-filled input would leave `construction` empty; its own forecast follows its last year down.
    const known = lines.slice(1, 61).map((line) => Number(line.split(',')[construction as number]));
    const mean = known.reduce((a, b) => a + b, 0) / known.length;
    const mae = forecast.reduce((s, v, i) => s + Math.abs(v - (truth[i] as number)), 0) / 12;
    expect(mae).toBeLessThan(Math.abs(mean - (truth.reduce((a, b) => a + b, 0) / 12)));
    const selection = (await jobs.stat(jobId)).Selection;
    expect(selection?.outputs.map((o) => o.column).sort()).toEqual(['construction', 'manufacturing']);
  });
});

describe('covariates', () => {
  it('uses a covariate known in the rows to forecast (a promotion that lifts sales)', { timeout: ENGINE_TIMEOUT }, async () => {
    const lines = ['day,promo,sales'];
    const promo = (t: number) => ((t * 7) % 5 === 0 ? 1 : 0);
    for (let t = 0; t < 80; t++) lines.push(`${t + 1},${promo(t)},${t < 70 ? 100 + 40 * promo(t) + (t % 3) : ''}`);
    const { jobId } = await jobs.jobWithData(`${lines.join('\n')}\n`);
    await jobs.finished(jobId);
    const rows = await jobs.output(jobId);
    const lifted = rows.filter((r) => r.promo === '1').map((r) => Number(r.sales));
    const plain = rows.filter((r) => r.promo === '0').map((r) => Number(r.sales));
    expect(lifted.length).toBeGreaterThan(0);
    expect(Math.min(...lifted)).toBeGreaterThan(Math.max(...plain) + 20);
  });

  it('uses only the past of a covariate stated as an input that is empty in the rows to forecast, never a mean', { timeout: ENGINE_TIMEOUT }, async () => {
    const lines = ['week,footfall,sales'];
    for (let t = 0; t < 60; t++) lines.push(`${t + 1},${t < 50 ? 1000 + 10 * t : ''},${t < 50 ? 200 + 2 * t : ''}`);
    const { jobId, trainingId } = await jobs.jobWithData(`${lines.join('\n')}\n`);
    await jobs.finished(jobId);
    await restateAndRun(jobId, trainingId, { footfall: 'input' });
    const rows = await jobs.output(jobId);
    expect(rows.every((r) => r.footfall === '')).toBe(true);
    // The trend carries on; a mean-filled footfall (1245) would have pulled the sales back.
    expect(Number(rows.at(-1)?.sales)).toBeGreaterThan(300);
    const selection = (await jobs.stat(jobId)).Selection;
    expect(selection?.outputs.map((o) => o.column)).toEqual(['sales']);
    // `week` is a plain number (no time axis): its value a horizon (10 rows) earlier is a feature; the 10 rows to
    // forecast read the known rows stored with the model.
    expect((selection as { timeNotes?: string[] } | null | undefined)?.timeNotes).toContain("input 'footfall' is empty in every row to forecast: its value 10 rows earlier is used (feature 'footfall (lag 10)')");
  });
});

describe('series too short for a model', () => {
  it('carries a one-row series forward and says so; a series with no known value is left empty with a note', { timeout: ENGINE_TIMEOUT }, async () => {
    const panel = industries(['Government', 'Construction'], 36, 6);
    const csv = `${panel.csv}Lonely,2004,6,123\nLonely,2004,7,\nGhost,2004,7,\nGhost,2004,8,\n`;
    const { jobId } = await jobs.jobWithData(csv);
    await jobs.finished(jobId);
    const rows = await jobs.output(jobId);
    expect(rows.filter((r) => r.industry === 'Lonely').map((r) => r.unemployed)).toEqual(['123']);
    expect(rows.filter((r) => r.industry === 'Ghost').map((r) => r.unemployed)).toEqual(['', '']);
    const panelReport = (await jobs.stat(jobId)).Selection?.panel;
    expect(panelReport?.series).toBe(4);
    const notes = new Map(panelReport?.perSeries.map((s) => [s.key[0], s.note]));
    expect(notes.get('Lonely')).toMatch(/too short for a model \(1 known rows/);
    expect(notes.get('Ghost')).toMatch(/no known value/);
    expect(notes.get('Government')).toBeUndefined();
  });

  it('takes a key stated with PUT /data <column>=key', { timeout: ENGINE_TIMEOUT }, async () => {
    const panel = industries(['Government', 'Finance', 'Construction'], 36, 6);
    const { jobId, trainingId } = await jobs.jobWithData(panel.csv);
    await jobs.finished(jobId);
    await restateAndRun(jobId, trainingId, { industry: 'key' });
    const report = (await jobs.stat(jobId)).Selection?.panel;
    expect(report).toMatchObject({ keys: ['industry'], keySource: 'stated', series: 3 });
  });
});
