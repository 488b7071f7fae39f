/**
 * The chart of an upload of many series, end to end: a real long upload (4 industries of
 * vega-datasets' unemployment across industries, 48 months each, the last 6 left empty) trained by the
 * real engine, then GET /charts.php draws one small panel per series over time; `series=` picks some.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTrainingRunner } from '../../src/jobs-runner/wiring.js';
import { CURRENT, OLDER, createTestContext, form, multipart, type TestContext, type TestUser } from '../support/helper.js';

let ctx: TestContext;
let training: ReturnType<typeof createTrainingRunner> | undefined;
let owner: TestUser;
const TZ = 'Europe/Madrid';
const ENGINE_TIMEOUT = 240_000;
const INDUSTRIES = ['Finance', 'Construction', 'Mining and Extraction', 'Information'];

const require = createRequire(import.meta.url);
type Unemployment = { series: string; year: number; month: number; rate: number };
// The package exports no data paths: the file is found beside its entry point.
const UNEMPLOYMENT = JSON.parse(readFileSync(path.join(path.dirname(require.resolve('vega-datasets')), '..', 'data', 'unemployment-across-industries.json'), 'utf8')) as Unemployment[];
const validateVegaLite = new Ajv({ strict: false, allErrors: false, validateFormats: false }).compile(
  JSON.parse(readFileSync(require.resolve('vega-lite/vega-lite-schema.json'), 'utf8')) as object,
);

/** Long format, sorted by key then date: series, year, month, rate; each series' last 6 months empty. */
function panelCsv() {
  const lines = ['series,year,month,rate'];
  for (const name of [...INDUSTRIES].sort()) {
    UNEMPLOYMENT.filter((r) => r.series === name)
      .slice(0, 48)
      .forEach((r, i) => lines.push(`${name},${r.year},${r.month},${i < 42 ? r.rate : ''}`));
  }
  return `${lines.join('\n')}\n`;
}

const known = (name: string) =>
  UNEMPLOYMENT.filter((r) => r.series === name)
    .slice(0, 42)
    .map((r) => r.rate);

let job: number;

beforeAll(async () => {
  ctx = await createTestContext();
  training = createTrainingRunner(ctx.services, { threads: 1, pollMs: 100, heartbeatMs: 200 });
  training.runner.start();
  owner = await ctx.createUser();
  const sub = await ctx.request({ method: 'POST', url: `${OLDER}/subscriptions.php?session=${owner.session}`, ...form({ app: 'forecast' }) });
  expect(sub.envelope.status).toBe(0);
  const created = await ctx.request({ method: 'POST', url: `${CURRENT}/jobs.php?session=${owner.session}&tz=${TZ}&app_name=forecast&newTraining=1` });
  job = Number((created.envelope.data as { job_id: number }).job_id);
  const uploaded = await ctx.request({
    method: 'POST',
    url: `${CURRENT}/data.php?tz=${TZ}`,
    ...multipart({ session: owner.session, job_id: job, file: 1 }, [{ field: 'Servicefile', filename: 'unemployment.csv', content: panelCsv() }]),
  });
  expect(uploaded.envelope.status, String(uploaded.envelope.data)).toBe(0);
  const deadline = Date.now() + ENGINE_TIMEOUT - 10_000;
  for (;;) {
    const res = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs.php?session=${owner.session}&tz=${TZ}&job_id=${job}` });
    const status = (res.envelope.data[0] as { Status: string }).Status;
    if (status === '3') break;
    if (['4', '5'].includes(status) || Date.now() > deadline) throw new Error(`job ${job} ended in status ${status}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}, ENGINE_TIMEOUT);

afterAll(async () => {
  await training?.close();
  await ctx?.close();
});

type Panel = { title: { text: string | string[]; subtitle: string[] }; layer: { data?: { values: { x: number; value: number; bridge?: boolean }[] } }[] };
const text = (t: string | string[]) => (Array.isArray(t) ? t.join(' ') : t);
const chart = (query: string) => ctx.app.inject({ method: 'GET', url: `${CURRENT}/charts.php?session=${owner.session}&job_id=${job}&${query}` });

async function vega(query: string) {
  const res = await ctx.request({ method: 'GET', url: `${CURRENT}/charts.php?session=${owner.session}&job_id=${job}&format=vega&${query}` });
  expect(res.envelope.status, String(res.envelope.data)).toBe(0);
  return res.envelope.data as { title: { text: string | string[]; subtitle: string[] }; columns: number; concat: Panel[] };
}

/** A panel's known rows and forecast rows (without the bridge point), from its layers' data. */
function drawn(panel: Panel) {
  const sets = panel.layer.map((l) => l.data?.values ?? []);
  const history = sets.find((v) => v.length > 0 && !v.some((p) => p.bridge))!;
  const forecast = sets.find((v) => v.some((p) => p.bridge))!.filter((p) => !p.bridge);
  return { history, forecast };
}

describe('GET /charts.php of an upload of many series', () => {
  it('draws one panel per series over time, in upload order, each titled with its own winner and its figures as stored', async () => {
    const progress = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs_progress.php?session=${owner.session}&tz=${TZ}&job_id=${job}&progress=2` });
    const selection = progress.envelope.data.Stat.Selection as { panel: { keys: string[]; series: number; perSeries: { key: string[]; outputs: { chosen: string }[] }[] } };
    expect(selection.panel).toMatchObject({ keys: ['series'], series: 4 });

    const spec = await vega('');
    expect(validateVegaLite(spec), JSON.stringify(validateVegaLite.errors?.slice(0, 3))).toBe(true);
    const names = [...INDUSTRIES].sort();
    expect(spec.concat.map((p) => text(p.title.text).split(': ')[0])).toEqual(names);
    const stored = (await ctx.request({ method: 'GET', url: `${CURRENT}/data.php?session=${owner.session}&tz=${TZ}&job_id=${job}&output=1&intervals=1` })).envelope.data as Record<string, string>[];
    spec.concat.forEach((panel, i) => {
      const name = names[i]!;
      const winner = selection.panel.perSeries.find((s) => s.key[0] === name)!.outputs[0]!.chosen;
      expect(text(panel.title.text)).toBe(`${name}: ${winner}`);
      expect(panel.title.subtitle.join(' ')).toMatch(/^backtest MAE [\d.]+ vs \S+ [\d.]+ 42 known rows, 6 forecast rows$/);
      const { history, forecast } = drawn(panel);
      // Its own 42 known months on a time axis from January 2000, then its own 6 forecast months from July 2003.
      expect(history.map((p) => p.value)).toEqual(known(name));
      expect(new Date(history[0]!.x).toISOString()).toBe('2000-01-01T00:00:00.000Z');
      expect(forecast.map((p) => new Date(p.x).toISOString().slice(0, 7))).toEqual(['2003-07', '2003-08', '2003-09', '2003-10', '2003-11', '2003-12']);
      expect(forecast.map((p) => p.value)).toEqual(stored.filter((r) => r.series === name).map((r) => Number(r.rate)));
    });
    expect(text(spec.title.text)).toBe('rate: 4 series keyed by series, one panel each');
    expect(spec.title.subtitle[0]).toBe('all 4 series, in upload order');
    expect(spec.title.subtitle[1]).toMatch(/^won by family over 4 series x 1 output: /);
  });

  it('series= picks series ignoring case; an unknown one is the error envelope naming it', async () => {
    const spec = await vega('series=information,FINANCE');
    expect(spec.concat.map((p) => text(p.title.text).split(': ')[0])).toEqual(['Information', 'Finance']);
    const res = await chart('series=Fishing&format=png');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 1,
      data: `Invalid parameter 'series': 'Fishing' is not a series of job ${job}: its 4 series are keyed by series, e.g. series=Construction,Finance,Information (several separated by commas, or positions in upload order such as 1..4)`,
    });
  });

  it('format=png and svg: the header above the grid, the full width, two panels across', async () => {
    const png = await chart('format=png&width=800&height=300');
    expect(png.headers['content-type']).toBe('image/png');
    const bytes = png.rawPayload;
    expect(bytes.subarray(1, 4).toString()).toBe('PNG');
    expect(bytes.readUInt32BE(16)).toBe(800);
    const header = bytes.readUInt32BE(20) - 2 * 300;
    expect(header).toBeGreaterThan(50);
    expect(header).toBeLessThan(150);
    // Kept to look at (git-ignored), beside the console test's screenshots.
    const artifacts = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'browser', 'artifacts');
    mkdirSync(artifacts, { recursive: true });
    writeFileSync(path.join(artifacts, 'panel-chart-trained.png'), bytes);
    const svg = await chart('format=svg&series=2..3');
    expect(svg.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(svg.body).toContain('Finance: ');
    expect(svg.body).toContain('Information: ');
    expect(svg.body).not.toContain('Construction: ');
    expect(svg.body).toContain('<svg x="400" y="');
  });
});
