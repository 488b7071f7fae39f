/**
 * Charts of uploads of many series and the layout of every chart: pure chart-data functions,
 * the charts service on a hand-made selection report and rows (the data service faked, as bench/charts
 * does), and the real renderer (Vega, resvg) on the test's thread.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { compile, type TopLevelSpec } from 'vega-lite';
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/domain/caller.js';
import { compareKeys, parseSeriesList, pickSeries, seriesParam, splitSeries, type Row } from '../../src/domain/charts/chart-data.js';
import { seriesSpec } from '../../src/domain/charts/chart-spec.js';
import { chartAddress, createChartsService, MAX_SERIES_PANELS, type ChartQuery } from '../../src/domain/charts/charts.service.js';
import { inThreadRenderer, renderSvg } from '../../src/domain/charts/render.js';
import { textWidth, wrapText } from '../../src/domain/charts/text-metrics.js';
import type { DataService } from '../../src/domain/data/data.service.js';
import { isAppError } from '../../src/domain/errors.js';
import type { JobsService } from '../../src/domain/jobs/jobs.service.js';
import type { SelectionReport } from '../../src/training/core/types.js';

const require = createRequire(import.meta.url);
const ARTIFACTS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'browser', 'artifacts');
const validateVegaLite = new Ajv({ strict: false, allErrors: false, validateFormats: false }).compile(
  JSON.parse(readFileSync(require.resolve('vega-lite/vega-lite-schema.json'), 'utf8')) as object,
);

type Unemployment = { series: string; year: number; month: number; rate: number };
// The package exports no data paths: the file is found beside its entry point.
const UNEMPLOYMENT = JSON.parse(readFileSync(path.join(path.dirname(require.resolve('vega-datasets')), '..', 'data', 'unemployment-across-industries.json'), 'utf8')) as Unemployment[];
const INDUSTRIES = [...new Set(UNEMPLOYMENT.map((r) => r.series))];

/**
 * A long upload of `industries` (48 months each, the last 6 left to forecast), as the engine leaves it:
 * the input holds every series' rows, the output the rows to forecast with the truth as the forecast and
 * bands around it; the selection report's panel part names a winner per series.
 */
function panelJob(industries: string[]) {
  const input: Row[] = [];
  const output: Row[] = [];
  for (const name of industries) {
    UNEMPLOYMENT.filter((r) => r.series === name)
      .slice(0, 48)
      .forEach((r, i) => {
        const hidden = i >= 42;
        input.push({ series: name, year: String(r.year), month: String(r.month), rate: hidden ? '' : String(r.rate) });
        if (hidden) {
          const [lo80, hi80, lo95, hi95] = [r.rate - 0.5, r.rate + 0.5, r.rate - 1, r.rate + 1].map(String);
          output.push({ series: name, year: String(r.year), month: String(r.month), rate: String(r.rate), rate_lo80: lo80!, rate_hi80: hi80!, rate_lo95: lo95!, rate_hi95: hi95! });
        }
      });
  }
  const families = ['ets', 'theta', 'sarima', 'seasonal-naive'];
  const selection: SelectionReport = {
    modelFamily: 'auto',
    scheme: 'rolling-origin',
    windows: 3,
    horizon: 6,
    frequency: 'monthly',
    season: 12,
    outputs: [{ column: 'rate', kind: 'numeric', metric: 'MASE', chosen: 'ets', description: 'ets', error: 0.8, baseline: { name: 'seasonal-naive', error: 1 }, candidates: [] }],
    panel: {
      keys: ['series'],
      keySource: 'detected',
      series: industries.length,
      shortest: 42,
      longest: 42,
      wins: Object.fromEntries(families.map((f) => [f, industries.filter((_, i) => i % 4 === families.indexOf(f)).length])),
      perSeries: industries.map((name, i) => ({
        key: [name],
        rows: 42,
        outputs: [{ column: 'rate', chosen: families[i % 4]!, error: 0.25 + i / 100, baseline: { name: 'seasonal-naive', error: 0.5 + i / 100 } }],
      })),
    },
  };
  const columns = [
    { name: 'series', type: 'categorical', role: 'input' },
    { name: 'year', type: 'date', role: 'date', date_part: 'year' },
    { name: 'month', type: 'date', role: 'date', date_part: 'month' },
    { name: 'rate', type: 'numeric', role: 'output' },
  ];
  return { input, output, selection, columns };
}

/** What a chart read of the input: the limits of its reads from the head, and how many tails it read. */
const reads = { head: [] as number[], tails: 0 };

/** The charts service over a job's rows held in memory, read the way the data service reads them. */
function chartsOf(job: { input: Row[]; output: Row[]; selection: SelectionReport | null; columns: object[] }) {
  reads.head = [];
  reads.tails = 0;
  const jobs = { get: async () => ({ id: 1, status: 3, selection: job.selection }) } as unknown as Pick<JobsService, 'get'>;
  const data = {
    columns: async () => job.columns,
    rows: async (_caller: Caller, q: { output: 0 | 1; progress: 0 | 1; cap?: number; limit: number }) => {
      const rows = q.output ? job.output : job.input;
      if (q.progress) return [{ count: String(rows.length) }];
      if (!q.output) reads.head.push(q.limit);
      return q.output ? rows.slice(0, q.cap) : rows.slice(0, q.limit > 0 ? q.limit : undefined);
    },
    knownTail: async (_caller: Caller, q: { column: string; last: number }) => {
      reads.tails++;
      const known = job.input.map((row, i) => ({ row, position: i + 1 })).filter(({ row }) => /\d/.test(row[q.column] ?? ''));
      const tail = known.slice(-q.last);
      return { known: known.length, rows: tail.map((k) => k.row), positions: tail.map((k) => k.position) };
    },
  } as unknown as Pick<DataService, 'columns' | 'rows' | 'knownTail'>;
  return createChartsService({ jobs, data, renderer: inThreadRenderer });
}

const caller = { userId: 1, role: 'consumer' } as Caller;
const query = (extra: Partial<ChartQuery> = {}): ChartQuery => ({ jobId: 7, history: 500, width: 800, height: 260, ...extra });

type Grid = { title: { text: string | string[]; subtitle: string[] }; columns: number; concat: { title: { text: string | string[]; subtitle: string[] }; layer: { data: { values: { x: number; value: number; bridge?: boolean }[] } }[] }[] };
const text = (t: string | string[]) => (Array.isArray(t) ? t.join(' ') : t);

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return error.message;
    throw error;
  }
  throw new Error('expected an error');
}

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(bytes: Buffer) {
  expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

describe('series= syntax', () => {
  it('separates series by commas and key values by |, trims each value, and a backslash escapes , | and itself', () => {
    expect(parseSeriesList('Finance, construction ,')).toEqual([
      { key: ['Finance'], text: 'Finance' },
      { key: ['construction'], text: 'construction' },
    ]);
    expect(parseSeriesList('3 | A,3|B')).toEqual([
      { key: ['3', 'A'], text: '3 | A' },
      { key: ['3', 'B'], text: '3|B' },
    ]);
    expect(parseSeriesList('Washington\\, D.C.|a\\|b\\\\c').map((i) => i.key)).toEqual([['Washington, D.C.', 'a|b\\c']]);
    // Written by seriesParam, read back by parseSeriesList: any value goes through.
    for (const key of [['Washington, D.C.'], ['a|b', 'c\\d'], [' x ', 'y']]) {
      expect(parseSeriesList(seriesParam(key))[0]!.key).toEqual(key.map((v) => v.trim()));
    }
  });

  it('matches keys ignoring case (an exact match first), then positions in key order, and names what matched nothing', () => {
    const all = [['Finance'], ['finance'], ['Mining'], ['13..14']];
    expect(pickSeries(all, parseSeriesList('FINANCE,finance,Finance'))).toEqual({ picked: [0, 1], unknown: [] });
    expect(pickSeries(all, parseSeriesList('2..3,mining'))).toEqual({ picked: [1, 2], unknown: [] });
    // A key written like a range is a key.
    expect(pickSeries(all, parseSeriesList('13..14'))).toEqual({ picked: [3], unknown: [] });
    expect(pickSeries(all, parseSeriesList('Finanse,3..99,0..1'))).toEqual({ picked: [2, 3], unknown: ['Finanse', '0..1'] });
    expect(pickSeries([['1', 'A']], parseSeriesList('1'))).toEqual({ picked: [], unknown: ['1'] });
  });

  it('orders keys value by value, numbers by their value', () => {
    const keys = [['10', 'b'], ['2', 'b'], ['2', 'A'], ['Store', 'x']];
    expect([...keys].sort(compareKeys)).toEqual([['2', 'A'], ['2', 'b'], ['10', 'b'], ['Store', 'x']]);
  });
});

describe('splitSeries', () => {
  it('groups known and forecast rows by key in the order they appear, each on its own time axis, keeping its last rows', () => {
    const { input, output, columns } = panelJob(['Mining and Extraction', 'Construction']);
    const known = input.map((row, i) => ({ row, position: i + 1 })).filter(({ row }) => row.rate !== '');
    const tail = { rows: known.map((k) => k.row), positions: known.map((k) => k.position), known: known.length };
    const series = splitSeries(['series'], columns.filter((c) => c.name !== 'series'), tail, output, 12);
    expect(series.map((s) => s.key)).toEqual([['Mining and Extraction'], ['Construction']]);
    for (const s of series) {
      expect(s.tail.known).toBe(42);
      expect(s.tail.rows).toHaveLength(12);
      expect(s.tail.rows.every((r) => r.series === s.key[0])).toBe(true);
      expect(s.output.map((r) => r.month)).toEqual(['7', '8', '9', '10', '11', '12']);
      // The last known month, June 2003, then the forecast from July.
      expect(new Date(s.axis!.input.at(-1)!).toISOString()).toBe('2003-06-01T00:00:00.000Z');
      expect(new Date(s.axis!.output[0]!).toISOString()).toBe('2003-07-01T00:00:00.000Z');
    }
    // Row numbers stay those of the upload: Construction is the upload's second series.
    expect(series[1]!.tail.positions.at(-1)).toBe(48 + 42);
  });
});

describe('charts of an upload of many series', () => {
  const four = ['Finance', 'Construction', 'Mining and Extraction', 'Information'];

  it('format=vega: a valid grid of one small panel per series over time, in upload order, each titled with its winner against its naive', async () => {
    const job = panelJob(four);
    const spec = (await chartsOf(job).spec(caller, query())) as unknown as Grid;
    expect(validateVegaLite(spec), JSON.stringify(validateVegaLite.errors?.slice(0, 3))).toBe(true);
    expect(compile(spec as unknown as TopLevelSpec).spec.marks?.length).toBeGreaterThan(0);
    expect(spec.columns).toBe(2);
    expect(spec.concat.map((p) => text(p.title.text))).toEqual(['Finance: ets', 'Construction: theta', 'Mining and Extraction: sarima', 'Information: seasonal-naive']);
    expect(spec.concat[0]!.title.subtitle).toEqual(['backtest MAE 0.25 vs seasonal-naive 0.5', '42 known rows, 6 forecast rows']);
    // Each panel draws its own series only, on a time axis: 42 months of Finance, then its 6 forecast months.
    const finance = spec.concat[0]!.layer.map((l) => l.data.values);
    const history = finance.find((values) => values.length === 42)!;
    expect(history.map((p) => p.value)).toEqual(job.input.filter((r) => r.series === 'Finance' && r.rate !== '').map((r) => Number(r.rate)));
    expect(new Date(history[0]!.x).toISOString()).toBe('2000-01-01T00:00:00.000Z');
    expect(text(spec.title.text)).toBe('rate: 4 series keyed by series, one panel each');
    expect(spec.title.subtitle).toEqual(['all 4 series, in upload order', 'won by family over 4 series x 1 output: ets 1, sarima 1, seasonal-naive 1, theta 1']);
  });

  it(`draws the first ${MAX_SERIES_PANELS} of many and says how many there are and how to ask for the rest`, async () => {
    const spec = (await chartsOf(panelJob(INDUSTRIES)).spec(caller, query())) as unknown as Grid;
    expect(INDUSTRIES.length).toBe(14);
    expect(spec.concat).toHaveLength(MAX_SERIES_PANELS);
    expect(spec.concat.map((p) => text(p.title.text).split(':')[0])).toEqual(INDUSTRIES.slice(0, 12));
    const said = spec.title.subtitle.join(' ');
    expect(said).toContain('series 1-12 of 14 drawn, in upload order');
    expect(said).toContain('others: series=13..14 (positions in upload order), or their series values separated by commas, e.g. series=Agriculture,Self-employed');
    const rest = (await chartsOf(panelJob(INDUSTRIES)).spec(caller, query({ series: '13..14' }))) as unknown as Grid;
    expect(rest.concat.map((p) => text(p.title.text).split(':')[0])).toEqual(['Agriculture', 'Self-employed']);
    expect(rest.title.subtitle.join(' ')).toContain(
      '2 of 14 series as asked (series=13..14); others: series=1..12 (positions in upload order), or their series values separated by commas, e.g. series=Government,Mining and Extraction',
    );
  });

  it('series= picks series by key, ignoring case, in the order asked; an unknown one or too many is a clear error', async () => {
    const charts = chartsOf(panelJob(INDUSTRIES));
    const picked = (await charts.spec(caller, query({ series: 'mining AND extraction, Finance' }))) as unknown as Grid;
    // Winners by upload order (i % 4): Mining and Extraction is the 2nd industry, Finance the 8th.
    expect(picked.concat.map((p) => text(p.title.text))).toEqual(['Mining and Extraction: theta', 'Finance: seasonal-naive']);
    expect(await failure(charts.spec(caller, query({ series: 'Finance,Fishing' })))).toBe(
      "Invalid parameter 'series': 'Fishing' is not a series of job 7: its 14 series are keyed by series, e.g. series=Government,Mining and Extraction,Construction (several separated by commas, or positions in upload order such as 1..12)",
    );
    expect(await failure(charts.spec(caller, query({ series: '1..13' })))).toBe("Invalid parameter 'series': names 13 series; a chart draws at most 12: ask for the rest in another chart");
  });

  it('a key of two columns: series are written store|product, and the chat hands out that address', async () => {
    const rows: Row[] = [];
    const output: Row[] = [];
    for (const store of ['2', '10']) {
      for (const product of ['A', 'B']) {
        for (let t = 0; t < 30; t++) {
          const value = String(100 * Number(store) + (product === 'A' ? 0 : 50) + (t % 7));
          rows.push({ store, product, day: `2024-01-${String(t + 1).padStart(2, '0')}`, sales: t < 27 ? value : '' });
          if (t >= 27) output.push({ store, product, day: `2024-01-${String(t + 1).padStart(2, '0')}`, sales: value });
        }
      }
    }
    const base = panelJob([]);
    const selection: SelectionReport = {
      ...base.selection,
      outputs: [{ ...base.selection.outputs[0]!, column: 'sales' }],
      panel: { keys: ['store', 'product'], keySource: 'stated', series: 4, shortest: 27, longest: 27, wins: { ets: 4 }, perSeries: [] },
    };
    const columns = [
      { name: 'store', type: 'numeric', role: 'key' },
      { name: 'product', type: 'categorical', role: 'key' },
      { name: 'day', type: 'categorical', role: 'input' },
      { name: 'sales', type: 'numeric', role: 'output' },
    ];
    const charts = chartsOf({ input: rows, output, selection, columns });
    const all = (await charts.spec(caller, query())) as unknown as Grid;
    // Store 2 before store 10; the day column (whole dates) is the time axis, not the numeric key.
    expect(all.concat.map((p) => text(p.title.text))).toEqual(['2 | A: no model', '2 | B: no model', '10 | A: no model', '10 | B: no model']);
    expect(new Date(all.concat[0]!.layer.map((l) => l.data.values).find((v) => v.length === 27)![0]!.x).toISOString()).toBe('2024-01-01T00:00:00.000Z');
    const one = (await charts.spec(caller, query({ series: '10|b' }))) as unknown as Grid;
    expect(one.concat.map((p) => text(p.title.text))).toEqual(['10 | B: no model']);
    expect(chartAddress('http://front.example', 3, [['10', 'B'], ['a,b', 'c']])).toBe(
      `http://front.example/api/202203010900/charts.php?job_id=3&format=png&series=${encodeURIComponent('10|B,a\\,b|c')}`,
    );
  });

  it('reads the first series from the head of the upload, as far as the report says they go', async () => {
    const spec = (await chartsOf(panelJob(INDUSTRIES)).spec(caller, query())) as unknown as Grid;
    expect(spec.concat).toHaveLength(12);
    // As many rows as the first 12 series hold by the report (42 known, 6 to forecast each), with a margin; no tail.
    expect(reads).toEqual({ head: [Math.ceil(12 * 48 * 1.1) + 50], tails: 0 });
  });

  it('series interleaved in the upload, or more rows than the report counts: the last known rows, each series still whole', async () => {
    const sorted = panelJob(INDUSTRIES.slice(0, 3));
    // By date, then key: the head holds every series, none of them whole.
    const interleaved = { ...sorted, input: [...sorted.input].sort((a, b) => Number(a.year) - Number(b.year) || Number(a.month) - Number(b.month)) };
    const undercounted = { ...sorted, selection: { ...sorted.selection, panel: { ...sorted.selection.panel!, perSeries: sorted.selection.panel!.perSeries.map((s) => ({ ...s, rows: 10 })) } } };
    for (const job of [interleaved, undercounted]) {
      const spec = (await chartsOf(job).spec(caller, query())) as unknown as Grid;
      expect(reads.head).toHaveLength(1);
      expect(reads.tails).toBe(1);
      expect(spec.concat.map((p) => text(p.title.text).split(':')[0])).toEqual(INDUSTRIES.slice(0, 3));
      for (const panel of spec.concat) {
        const name = text(panel.title.text).split(':')[0];
        const history = panel.layer.map((l) => l.data.values).find((v) => v.length === 42)!;
        expect(history.map((p) => p.value)).toEqual(sorted.input.filter((r) => r.series === name && r.rate !== '').map((r) => Number(r.rate)));
      }
    }
  });

  it('series= on a job of one series is an error naming why', async () => {
    const job = panelJob(['Finance']);
    const single = { ...job, selection: { ...job.selection, panel: undefined }, input: job.input.map(({ series: _s, ...r }) => r), output: job.output.map(({ series: _s, ...r }) => r) };
    expect(await failure(chartsOf(single).spec(caller, query({ series: 'Finance' })))).toBe(
      "Invalid parameter 'series': job 7 holds one series (its upload has no key columns); series picks among the series of an upload of many",
    );
  });

  it('the PNG is the header above a grid of panels, width x (header + rows x height), and is kept to look at', async () => {
    const charts = chartsOf(panelJob(INDUSTRIES));
    const png = await charts.png(caller, query({ width: 900, height: 240 }));
    const size = pngSize(png);
    expect(size.width).toBe(900);
    // 12 panels, 3 across (300 px each): 4 rows under a header of a few lines.
    expect(size.height - 4 * 240).toBeGreaterThan(60);
    expect(size.height - 4 * 240).toBeLessThan(160);
    const svg = await charts.svg(caller, query({ width: 900, height: 240 }));
    expect(svg.match(/<svg x="\d+" y="\d+" /g)).toHaveLength(13);
    expect(svg).toContain('<svg x="600" y="');
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(path.join(ARTIFACTS, 'panel-chart.png'), png);
  });
});

describe('layout: the plot fills the width, long titles wrap', () => {
  /** The plot's width in a drawn panel: the frame's background path, `M0.5,0.5h<width>`. */
  const plotWidth = (svg: string) => Number(/class="background"[^>]*d="M0\.5,0\.5h(\d+(?:\.\d+)?)/.exec(svg)?.[1] ?? /d="M0\.5,0\.5h(\d+(?:\.\d+)?)v[^"]*"[^>]*class="background"/.exec(svg)?.[1] ?? NaN);

  it('measures text in the font drawn (DejaVu Sans), not by 0.8 x size a character', () => {
    expect(textWidth('M', 10)).toBeCloseTo(8.63, 1);
    expect(textWidth('i', 10)).toBeCloseTo(2.78, 1);
    expect(textWidth('M', 10, true)).toBeGreaterThan(textWidth('M', 10));
    const lines = wrapText('load: combination of mstl (0.45), harmonic (0.35) and seasonal-naive-weekly (0.20)', 300, 13, true);
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(textWidth(line, 13, true)).toBeLessThanOrEqual(300);
    expect(wrapText('x'.repeat(200), 100, 12).every((line) => textWidth(line, 12) <= 100)).toBe(true);
  });

  it('a half-hourly chart with a long title: the title wraps within the image and the plot takes nearly all its width', async () => {
    const step = 1_800_000;
    const start = Date.UTC(2024, 0, 1);
    const history = Array.from({ length: 480 }, (_, i) => ({ x: start + i * step, value: 300 + 100 * Math.sin((2 * Math.PI * i) / 48) }));
    const forecast = Array.from({ length: 48 }, (_, k) => ({ x: start + (480 + k) * step, value: 300, lo80: 250, hi80: 350, lo95: 200, hi95: 400 }));
    const panel = { kind: 'series' as const, column: 'load', axis: 'time' as const, history, forecast, boundary: start + 479.5 * step, knownRows: 17_000, shownRows: 480, forecastRows: 48, withIntervals: true };
    const title = {
      text: 'load: combination of mstl (0.45), harmonic (0.35) and seasonal-naive-weekly (0.20), weighted by inverse backtest error over 3 windows of 48 rows',
      subtitle: ['backtest MAE 12.34 vs best naive seasonal-naive 20.1', 'last 480 of 17000 known rows, 48 forecast rows, 80% and 95% intervals'],
    };
    const spec = seriesSpec(panel, title, { width: 800, height: 300 }, 'line') as unknown as { title: { text: string[] } };
    expect(spec.title.text.length).toBeGreaterThan(1);
    for (const line of spec.title.text) expect(textWidth(line, 13, true)).toBeLessThan(800 - 10);
    const svg = await renderSvg([spec as unknown as TopLevelSpec], { width: 800, height: 300 });
    expect(svg).toMatch(/^<svg [^>]*width="800" height="300"/);
    // Before titles were wrapped and measured, this title left the plot no width at all.
    expect(plotWidth(svg)).toBeGreaterThan(0.85 * 800);
    expect(svg).toContain('over 3 windows of 48 rows');
  });
});
