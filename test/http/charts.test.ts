/**
 * The chart resource (an addition beyond the spec): GET/POST /charts.php draws a job's forecast as Vega-Lite,
 * SVG or PNG. Real service (app.inject), real worker-thread training, real database; the job is trained to a
 * forecast the way forecasting.test.ts does it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { compile, type TopLevelSpec } from 'vega-lite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTrainingRunner } from '../../src/jobs-runner/wiring.js';
import { CURRENT, OLDER, createTestContext, form, multipart, type TestContext, type TestUser } from '../support/helper.js';

let ctx: TestContext;
let training: ReturnType<typeof createTrainingRunner> | undefined;
let owner: TestUser;
let other: TestUser;
let admin: TestUser;
const TZ = 'Europe/Madrid';
const ENGINE_TIMEOUT = 240_000;

/** Monthly trend plus season: 60 known months, then 6 left empty to forecast. */
function monthlySeries(known: number, hidden: number) {
  const lines = ['year,month,sales'];
  for (let t = 0; t < known + hidden; t++) {
    const month = (t % 12) + 1;
    const y = 200 + 1.5 * t + 15 * Math.sin((2 * Math.PI * (month - 1)) / 12) + ((t * 7919) % 13) / 13;
    lines.push(`${2000 + Math.floor(t / 12)},${month},${t < known ? y.toFixed(2) : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Tabular classification: the class follows the sign of a - b; the last 8 rows are left to predict. */
function classes(rows: number, hidden: number) {
  const lines = ['a,b,label'];
  for (let i = 0; i < rows; i++) {
    const a = (i * 37) % 17;
    const b = (i * 11) % 13;
    lines.push(`${a},${b},${i < rows - hidden ? (a > b ? 'up' : 'down') : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Tabular regression: y = 3a - b + a little noise, no time axis; the last `hidden` rows are left to predict. */
function regression(rows: number, hidden: number) {
  const lines = ['a,b,y'];
  for (let i = 0; i < rows; i++) {
    const a = (i * 37) % 17;
    const b = (i * 11) % 13;
    lines.push(`${a},${b},${i < rows - hidden ? (3 * a - b + ((i * 7) % 5) / 10).toFixed(2) : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

async function newJob(user: TestUser) {
  const job = await ctx.request({ method: 'POST', url: `${CURRENT}/jobs.php?session=${user.session}&tz=${TZ}&app_name=forecast&newTraining=1` });
  expect(job.envelope.status, String(job.envelope.data)).toBe(0);
  return Number((job.envelope.data as { job_id: number }).job_id);
}

async function upload(jobId: number, csv: string) {
  const res = await ctx.request({
    method: 'POST',
    url: `${CURRENT}/data.php?tz=${TZ}`,
    ...multipart({ session: owner.session, job_id: jobId, file: 1 }, [{ field: 'Servicefile', filename: 'data.csv', content: csv }]),
  });
  expect(res.envelope.status, String(res.envelope.data)).toBe(0);
}

async function finished(jobId: number) {
  const deadline = Date.now() + ENGINE_TIMEOUT - 10_000;
  for (;;) {
    const res = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs.php?session=${owner.session}&tz=${TZ}&job_id=${jobId}` });
    const status = (res.envelope.data[0] as { Status: string }).Status;
    if (status === '3') return;
    if (['4', '5'].includes(status) || Date.now() > deadline) throw new Error(`job ${jobId} ended in status ${status}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** The raw reply of a chart request (images are not JSON, so not ctx.request). */
const chart = (user: TestUser, query: string) => ctx.app.inject({ method: 'GET', url: `${CURRENT}/charts.php?session=${user.session}&${query}` });

async function vegaSpec(user: TestUser, query: string): Promise<Record<string, any>> {
  const res = await ctx.request({ method: 'GET', url: `${CURRENT}/charts.php?session=${user.session}&format=vega&${query}` });
  expect(res.envelope.status, String(res.envelope.data)).toBe(0);
  return res.envelope.data as Record<string, any>;
}

async function chartError(user: TestUser, query: string): Promise<string> {
  const res = await chart(user, query);
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const envelope = res.json<{ status: number; data: string }>();
  expect(envelope.status).toBe(1);
  return envelope.data;
}

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(bytes: Buffer) {
  expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(bytes.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

const require = createRequire(import.meta.url);
const validateVegaLite = new Ajv({ strict: false, allErrors: false, validateFormats: false }).compile(
  JSON.parse(readFileSync(require.resolve('vega-lite/vega-lite-schema.json'), 'utf8')) as object,
);

let series: number;
let tabular: number;
let numericTable: number;
let empty: number;

beforeAll(async () => {
  ctx = await createTestContext();
  training = createTrainingRunner(ctx.services, { threads: 1, pollMs: 100, heartbeatMs: 200 });
  training.runner.start();
  owner = await ctx.createUser();
  other = await ctx.createUser();
  admin = await ctx.createUser({ role: 'admin' });
  const sub = await ctx.request({ method: 'POST', url: `${OLDER}/subscriptions.php?session=${owner.session}`, ...form({ app: 'forecast' }) });
  expect(sub.envelope.status).toBe(0);
  series = await newJob(owner);
  await upload(series, monthlySeries(60, 6));
  tabular = await newJob(owner);
  await upload(tabular, classes(80, 8));
  numericTable = await newJob(owner);
  await upload(numericTable, regression(60, 5));
  empty = await newJob(owner);
  await finished(series);
  await finished(tabular);
  await finished(numericTable);
}, ENGINE_TIMEOUT);

afterAll(async () => {
  await training?.close();
  await ctx?.close();
});

describe('GET /charts.php format=vega', () => {
  it('is a valid Vega-Lite specification: the schema the package ships accepts it and vega-lite compiles it', async () => {
    const spec = await vegaSpec(owner, `job_id=${series}`);
    expect(validateVegaLite(spec), JSON.stringify(validateVegaLite.errors?.slice(0, 3))).toBe(true);
    const vega = compile(spec as TopLevelSpec).spec;
    expect(vega.marks?.length).toBeGreaterThan(0);
  });

  it('holds the history, the forecast with its 80% and 95% bounds, the boundary rule, and the model against the best naive', async () => {
    const spec = await vegaSpec(owner, `job_id=${series}`);
    const history = spec.datasets.history as { x: number; value: number }[];
    const [bridge, ...forecast] = spec.datasets.forecast as { x: number; value: number; lo80?: number; hi95?: number; bridge?: boolean }[];
    expect(history).toHaveLength(60);
    expect(forecast).toHaveLength(6);
    // The forecast line and its bands start at the last known point.
    expect(bridge).toMatchObject({ ...history.at(-1), bridge: true });
    // A time axis from year + month: the first forecast month follows the last known one.
    expect(new Date(history.at(-1)!.x).toISOString()).toBe('2004-12-01T00:00:00.000Z');
    expect(new Date(forecast[0]!.x).toISOString()).toBe('2005-01-01T00:00:00.000Z');
    expect(spec.datasets.boundary).toEqual([{ x: (history.at(-1)!.x + forecast[0]!.x) / 2 }]);
    for (const p of forecast) {
      expect(p.lo80).toBeLessThanOrEqual(p.value);
      expect(p.hi95).toBeGreaterThanOrEqual(p.value);
    }
    // The figures are the stored output's, as GET /data intervals=1 shows them.
    const stored = await ctx.request({ method: 'GET', url: `${CURRENT}/data.php?session=${owner.session}&tz=${TZ}&job_id=${series}&output=1&intervals=1` });
    expect(forecast.map((p) => [p.value, p.lo80, p.hi95])).toEqual(
      (stored.envelope.data as Record<string, string>[]).map((r) => [Number(r.sales), Number(r.sales_lo80), Number(r.sales_hi95)]),
    );
    const marks = (spec.layer as { mark: { type: string } }[]).map((l) => l.mark.type);
    expect(marks).toEqual(['area', 'area', 'line', 'line', 'rule']);
    const progress = await ctx.request({ method: 'GET', url: `${CURRENT}/jobs_progress.php?session=${owner.session}&tz=${TZ}&job_id=${series}&progress=2` });
    const [sales] = (progress.envelope.data.Stat.Selection as { outputs: { chosen: string; baseline: { name: string } }[] }).outputs;
    expect(spec.title.text).toMatch(new RegExp(`^sales: ${sales!.chosen}`));
    expect(spec.title.subtitle[0]).toMatch(new RegExp(`^backtest MAE [\\d.]+ vs best naive ${sales!.baseline.name} [\\d.]+$`));
    expect(spec.title.subtitle[1]).toBe('60 known rows, 6 forecast rows, 80% and 95% intervals');
  });

  it('draws only the last `history` known rows, and says so', async () => {
    const spec = await vegaSpec(owner, `job_id=${series}&history=12`);
    expect(spec.datasets.history).toHaveLength(12);
    expect(spec.title.subtitle[1]).toMatch(/^last 12 of 60 known rows/);
  });

  it('draws a classification as class counts, known against predicted, with its error rate against the naive one', async () => {
    const spec = await vegaSpec(owner, `job_id=${tabular}`);
    expect(validateVegaLite(spec)).toBe(true);
    expect(spec.mark.type).toBe('bar');
    const counts = spec.data.values as { value: string; part: string; count: number }[];
    expect(counts.filter((c) => c.part === 'known').reduce((s, c) => s + c.count, 0)).toBe(72);
    expect(counts.filter((c) => c.part === 'predicted').reduce((s, c) => s + c.count, 0)).toBe(8);
    expect(spec.title.text).toMatch(/^label: /);
    expect(spec.title.subtitle[0]).toMatch(/^backtest error rate [\d.]+% vs best naive \S+ [\d.]+%$/);
  });

  it('draws a tabular numeric output (no time axis) as known values then predictions with interval bars, by row number', async () => {
    const spec = await vegaSpec(owner, `job_id=${numericTable}`);
    expect(validateVegaLite(spec)).toBe(true);
    expect((spec.layer as { mark: { type: string } }[]).map((l) => l.mark.type)).toEqual(['rule', 'rule', 'point', 'point', 'rule']);
    expect(spec.encoding.x).toMatchObject({ type: 'quantitative', title: 'row' });
    expect(spec.datasets.history).toHaveLength(55);
    expect((spec.datasets.forecast as { x: number; bridge?: boolean }[]).filter((p) => !p.bridge).map((p) => p.x)).toEqual([56, 57, 58, 59, 60]);
    expect(spec.title.subtitle[1]).toBe('55 known rows, 5 forecast rows, 80% and 95% intervals; no time axis: known rows, then predicted rows, by row number');
  });
});

describe('GET /charts.php images', () => {
  it('format=svg (the default) is an SVG document with a mark group per layer and the title', async () => {
    const res = await chart(owner, `job_id=${series}&width=700&height=280`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(XMLValidator.validate(res.body)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false }).parse(res.body) as { svg: Record<string, string> };
    expect([doc.svg['@_width'], doc.svg['@_height']]).toEqual(['700', '280']);
    for (const mark of ['mark-area', 'mark-line', 'mark-rule', 'mark-symbol']) expect(res.body).toContain(`class="${mark} role-mark`);
    expect(res.body.match(/class="mark-area role-mark/g)).toHaveLength(2);
    expect(res.body).toContain('sales: ');
    expect(res.body).toContain('vs best naive');
  });

  it('format=png has the PNG signature and the asked width and height', async () => {
    const res = await chart(owner, `job_id=${series}&format=png&width=640&height=320`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(pngSize(res.rawPayload)).toEqual({ width: 640, height: 320 });
  });

  it('POST takes the same parameters as a form', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: `${CURRENT}/charts.php`, ...form({ session: owner.session, job_id: tabular, format: 'png', width: 300, height: 200 }) });
    expect(pngSize(res.rawPayload)).toEqual({ width: 300, height: 200 });
  });
});

describe('outputs written beside the engine (two forecast columns; no date columns; a 10,000-row series)', () => {
  /** A Pending job whose input has the given roles and whose output is written directly, as the engine would. */
  async function storedForecast(csv: string, roles: Record<string, string>, rows: Record<string, string>[], header: string[]) {
    const jobId = await newJob(owner);
    await upload(jobId, csv);
    const put = await ctx.request({ method: 'PUT', url: `${CURRENT}/data.php`, ...form({ session: owner.session, job_id: jobId, ...roles }) });
    expect(put.envelope.status, String(put.envelope.data)).toBe(0);
    const bounds = (v: string) => ({ lo80: String(Number(v) - 1), hi80: String(Number(v) + 1), lo95: String(Number(v) - 2), hi95: String(Number(v) + 2) });
    const outputs = header.filter((h) => roles[h] === 'output');
    await ctx.services.data.writeOutput(jobId, rows, header, rows.map((r) => Object.fromEntries(outputs.map((o) => [o, bounds(r[o]!)]))));
    return jobId;
  }

  let twoColumns: number;
  let noDates: number;
  let big: number;
  beforeAll(async () => {
    // No engine from here on: these jobs stay Pending with the output written by the test.
    await training?.close();
    training = undefined;
    const months = Array.from({ length: 24 }, (_, t) => `${2010 + Math.floor(t / 12)},${(t % 12) + 1},${100 + t},${50 + (t % 5)}`);
    twoColumns = await storedForecast(`year,month,sales,costs\n${months.join('\n')}\n`, { sales: 'output', costs: 'output' }, [
      { year: '2012', month: '1', sales: '124', costs: '54' },
      { year: '2012', month: '2', sales: '125', costs: '50' },
    ], ['year', 'month', 'sales', 'costs']);
    const lines = Array.from({ length: 30 }, (_, i) => `${i % 7},${3 * i}`);
    noDates = await storedForecast(`x,y\n${lines.join('\n')}\n`, { y: 'output' }, [{ x: '2', y: '90' }, { x: '3', y: '93' }], ['x', 'y']);
    const days = 10_000;
    const day = (i: number) => new Date(Date.UTC(1990, 0, 1) + i * 86_400_000);
    const row = (i: number) => [day(i).getUTCFullYear(), day(i).getUTCMonth() + 1, day(i).getUTCDate(), (500 + 40 * Math.sin(i / 58) + (i % 7)).toFixed(2)].join(',');
    const csv = `year,month,day,load\n${Array.from({ length: days }, (_, i) => row(i)).join('\n')}\n`;
    const forecast = Array.from({ length: 30 }, (_, k) => {
      const d = day(days + k);
      return { year: String(d.getUTCFullYear()), month: String(d.getUTCMonth() + 1), day: String(d.getUTCDate()), load: String(520 + k) };
    });
    // 10,000 known days and 30 forecast ones: the drawing tests' big chart.
    big = await storedForecast(csv, { load: 'output' }, forecast, ['year', 'month', 'day', 'load']);
  });

  it('stacks one panel per forecast column: the PNG is width x (height x panels), the SVG nests both', async () => {
    const png = await chart(owner, `job_id=${twoColumns}&format=png&width=500&height=250`);
    expect(pngSize(png.rawPayload)).toEqual({ width: 500, height: 500 });
    const svg = await chart(owner, `job_id=${twoColumns}&width=500&height=250`);
    expect(XMLValidator.validate(svg.body)).toBe(true);
    expect(svg.body).toMatch(/^<svg [^>]*width="500" height="500"/);
    expect(svg.body).toContain('<svg x="0" y="250" ');
    expect(svg.body).toContain('sales: neural network');
    expect(svg.body).toContain('costs: neural network');
    const spec = await vegaSpec(owner, `job_id=${twoColumns}`);
    expect(validateVegaLite(spec)).toBe(true);
    expect((spec.vconcat as { title: { text: string } }[]).map((p) => p.title.text)).toEqual(['sales: neural network', 'costs: neural network']);
  });

  it('refuses an image above 16 million pixels before drawing it', async () => {
    expect(await chartError(owner, `job_id=${twoColumns}&format=png&width=4000&height=3000`)).toBe(
      "Invalid parameter 'height': 2 panels of 4000 x 3000 exceed 16 million pixels; ask for one column or a smaller size",
    );
  });

  it('`column` picks one panel, case-insensitively', async () => {
    const spec = await vegaSpec(owner, `job_id=${twoColumns}&column=COSTS`);
    expect(spec.title.text).toBe('costs: neural network');
    expect(spec.datasets.history).toHaveLength(24);
    expect(pngSize((await chart(owner, `job_id=${twoColumns}&format=png&column=costs&width=500&height=250`)).rawPayload)).toEqual({ width: 500, height: 250 });
  });

  it('without date columns draws by row number, forecast rows after the last known one, and says so', async () => {
    const spec = await vegaSpec(owner, `job_id=${noDates}`);
    expect(spec.encoding.x).toMatchObject({ type: 'quantitative', title: 'row' });
    expect((spec.datasets.history as { x: number }[]).map((p) => p.x)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect((spec.datasets.forecast as { x: number }[]).map((p) => p.x)).toEqual([30, 31, 32]);
    expect(spec.title.subtitle).toEqual(['legacy single network: no backtest selection', '30 known rows, 2 forecast rows, 80% and 95% intervals; by row number (no readable dates)']);
  });

  it('draws on a worker thread: while a 10,000-row PNG renders, other requests keep being answered at once', async () => {
    const query = `job_id=${big}&format=png&history=0&width=4000&height=3000`;
    // The largest size, so the drawing (about 0.6 s on the request's thread) dwarfs the rows' reading.
    await chart(owner, query); // the drawing thread started and Vega loaded, so the timing below is the drawing

    // Cheap requests one after another for as long as the chart takes: each one's wait is how long the
    // event loop was held. Drawn on the request's thread, one of them would wait for the whole drawing.
    let drawing = true;
    const started = performance.now();
    const drawn = chart(owner, query).finally(() => (drawing = false));
    const waits: number[] = [];
    while (drawing) {
      const sent = performance.now();
      const probe = await ctx.app.inject({ method: 'GET', url: '/healthz' });
      expect(probe.json()).toEqual({ status: 0, data: 'ok' });
      waits.push(performance.now() - sent);
      await new Promise((r) => setTimeout(r, 2));
    }
    const res = await drawn;
    const chartMs = performance.now() - started;
    expect(res.headers['content-type']).toBe('image/png');
    expect(pngSize(res.rawPayload)).toEqual({ width: 4000, height: 3000 });
    const longest = Math.max(...waits);
    expect(waits.length, `${waits.length} probes answered while the chart took ${chartMs.toFixed(0)} ms`).toBeGreaterThan(5);
    expect(longest, `longest probe wait ${longest.toFixed(0)} ms while the chart took ${chartMs.toFixed(0)} ms`).toBeLessThan(chartMs / 3);
  }, 60_000);

  it('past one drawing and 8 waiting, a chart is refused at once with the envelope and a retry hint', async () => {
    // A 30-row job drawn at the largest size: its rows read in milliseconds and each drawing takes far longer, so
    // the 20 requests reach the renderer together, however loaded the machine (with the 10,000-row job the reads,
    // one after another on the embedded database, could let the renderer drain before the queue filled).
    const replies = await Promise.all(Array.from({ length: 20 }, () => chart(owner, `job_id=${noDates}&format=png&width=4000&height=3000`)));
    const json = replies.filter((r) => String(r.headers['content-type']).startsWith('application/json'));
    const busy = /^Service unavailable: the chart renderer is busy \(9 charts drawing or waiting\); try again in \d+ seconds$/;
    const refused = json.filter((r) => busy.test(String(r.json().data)));
    expect(refused.length).toBeGreaterThan(0);
    // Admitted: 9 (one drawing, 8 waiting). On a loaded machine the last admitted may exceed the pool's time
    // limit while waiting, which is its own envelope, not a busy refusal.
    expect(replies.length - refused.length).toBeGreaterThanOrEqual(9);
    for (const r of json) {
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual({ status: 1, data: expect.stringMatching(refused.includes(r) ? busy : /^Service unavailable: drawing this chart took longer than \d+ seconds/) });
    }
    for (const r of replies.filter((r) => !json.includes(r))) expect(pngSize(r.rawPayload)).toEqual({ width: 4000, height: 3000 });
  }, 120_000);

  describe('a long input (more known rows than a chart draws): only the drawn rows are read', () => {
    // 100,250 rows by row number: every 1000th row and one near the end have no value, the last 10 are the forecast's.
    const ROWS = 100_250;
    const CAP = 100_000;
    const blank = (i: number) => i % 1000 === 999 || i === ROWS - 30 || i >= ROWS - 10;
    const knownPositions = Array.from({ length: ROWS }, (_, i) => i).filter((i) => !blank(i)).map((i) => i + 1);
    let long: number;
    let wideOutput: number;
    beforeAll(async () => {
      const lines = Array.from({ length: ROWS }, (_, i) => `${i % 7},${blank(i) ? '' : String(i % 500)}`);
      const forecast = Array.from({ length: 10 }, (_, k) => ({ x: String(k % 7), y: String(400 + k) }));
      long = await storedForecast(`x,y\n${lines.join('\n')}\n`, { y: 'output' }, forecast, ['x', 'y']);
      // A tabular job may predict far more rows than a chart reads.
      const predicted = Array.from({ length: 10_005 }, (_, k) => ({ x: String(k % 7), y: String(k % 90) }));
      wideOutput = await storedForecast(`x,y\n${Array.from({ length: 30 }, (_, i) => `${i % 7},${i}`).join('\n')}\n`, { y: 'output' }, predicted, ['x', 'y']);
    }, 120_000);

    it('history=50 draws exactly the last 50 known rows, numbered by their rows in the input, and the forecast after the last known row', async () => {
      const spec = await vegaSpec(owner, `job_id=${long}&history=50`);
      expect((spec.datasets.history as { x: number }[]).map((p) => p.x)).toEqual(knownPositions.slice(-50));
      // The blank row numbered ROWS - 29 is skipped, not renumbered: its neighbours keep their numbers.
      expect(knownPositions.slice(-50)).toEqual(expect.arrayContaining([ROWS - 30, ROWS - 28]));
      expect(knownPositions.slice(-50)).not.toContain(ROWS - 29);
      expect((spec.datasets.forecast as { x: number; bridge?: boolean }[]).filter((p) => !p.bridge).map((p) => p.x)).toEqual(
        Array.from({ length: 10 }, (_, k) => ROWS - 9 + k),
      );
      expect(spec.title.subtitle[1]).toBe(`last 50 of ${knownPositions.length} known rows, 10 forecast rows, 80% and 95% intervals; by row number (no readable dates)`);
    });

    it('history=0 (all) and a history above the cap are cut at 100,000 known rows, and the subtitle says so', async () => {
      expect(knownPositions.length).toBeGreaterThan(CAP);
      for (const history of [0, 200_000]) {
        const spec = await vegaSpec(owner, `job_id=${long}&history=${history}`);
        const drawn = (spec.datasets.history as { x: number }[]).map((p) => p.x);
        expect(drawn).toHaveLength(CAP);
        expect(drawn[0]).toBe(knownPositions.at(-CAP));
        expect(drawn.at(-1)).toBe(ROWS - 10);
        expect(spec.title.subtitle[1]).toMatch(new RegExp(`^last ${CAP} of ${knownPositions.length} known rows \\(at most ${CAP} drawn\\), 10 forecast rows`));
      }
    }, 60_000);

    it('the chart takes from the data service only the rows it draws, not the whole input', async () => {
      const data = ctx.services.data;
      const spies = (['rows', 'knownTail'] as const).filter((name) => name in data).map((name) => vi.spyOn(data, name));
      try {
        const spec = await vegaSpec(owner, `job_id=${long}&history=50`);
        expect(spec.datasets.history).toHaveLength(50);
        let received = 0;
        for (const spy of spies) {
          for (const result of spy.mock.results) {
            const value = (await result.value) as unknown[] | { rows: unknown[] };
            received += Array.isArray(value) ? value.length : value.rows.length;
          }
        }
        // 50 known rows, the 10 forecast rows and the output's row count, of 100,260 stored.
        expect(received).toBeLessThanOrEqual(61);
      } finally {
        for (const spy of spies) spy.mockRestore();
      }
    });

    it('an output of more than 10,000 rows is read up to its first 10,000, and the subtitle says so', async () => {
      const spec = await vegaSpec(owner, `job_id=${wideOutput}`);
      expect((spec.datasets.forecast as { bridge?: boolean }[]).filter((p) => !p.bridge)).toHaveLength(10_000);
      // Wider than the 800-pixel image: wrapped onto a second line rather than pushing the plot aside.
      expect(spec.title.subtitle.slice(1)).toEqual(['30 known rows, 10000 forecast rows (from the first 10000 of 10005 output rows), 80% and 95% intervals; by row number (no', 'readable dates)']);
    }, 60_000);
  });
});

describe('who sees a chart, and errors', () => {
  it('an administrator sees any job’s chart', async () => {
    const res = await chart(admin, `job_id=${series}`);
    expect(res.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(res.body).toContain('sales: ');
  });

  it('another consumer gets the envelope error, as for GET /data', async () => {
    expect(await chartError(other, `job_id=${series}`)).toBe(`Job ${series} not found`);
    expect(await chartError(other, `job_id=${series}&format=png`)).toBe(`Job ${series} not found`);
  });

  it('a job with no forecast yet gets a clear error', async () => {
    expect(await chartError(owner, `job_id=${empty}&format=png`)).toBe(
      `Job ${empty} has no forecast to chart yet (status Created); its chart is drawn once training has finished`,
    );
  });

  it('no session, bad parameters and an unknown column are envelope errors', async () => {
    const anonymous = await ctx.app.inject({ method: 'GET', url: `${CURRENT}/charts.php?job_id=${series}` });
    expect(anonymous.json()).toEqual({ status: 1, data: "Missing required parameter 'session'" });
    expect(await chartError(owner, 'format=svg')).toBe("Missing required parameter 'job_id'");
    expect(await chartError(owner, `job_id=${series}&format=gif`)).toBe("Invalid parameter 'format': must be svg, png or vega");
    expect(await chartError(owner, `job_id=${series}&width=50`)).toBe("Invalid parameter 'width': must be between 200 and 4000");
    expect(await chartError(owner, `job_id=${series}&history=-1`)).toBe("Invalid parameter 'history': must be between 0 and 1000000");
    expect(await chartError(owner, `job_id=${series}&column=nope`)).toBe(`Invalid parameter 'column': 'nope' is not a forecast column of job ${series} (columns: sales)`);
  });
});
