/**
 * The panel engine's rules that need no HTTP: which columns are the key, what a row cap does to
 * many series, and the bad inputs a panel must survive (repeated stamps in a series, empty key cells, tens of
 * thousands of series too short for a model).
 */
import { describe, expect, it } from 'vitest';
import { trainModel } from '../../src/training/run/engine.js';
import { assembleUnit, planTraining, runChooseUnit, runFitUnit, runRoundUnit, runScoreUnit } from '../../src/training/run/job-parts.js';
import { seriesPlan } from '../../src/training/panel/panel.js';
import { predict } from '../../src/training/run/predict.js';
import { mulberry32 } from '../../src/training/core/prng.js';
import type { PanelState } from '../../src/training/panel/panel-predict.js';
import type { ColumnSpec, TrainedModelV2, TrainingInput, TrainingResult } from '../../src/training/core/types.js';

const num = (name: string, role: ColumnSpec['role'] = 'input'): ColumnSpec => ({ name, role, kind: 'numeric' });
const text = (name: string, role: ColumnSpec['role'] = 'input'): ColumnSpec => ({ name, role, kind: 'categorical' });
const part = (name: 'year' | 'month'): ColumnSpec => ({ name, role: 'date', kind: 'numeric', datePart: name });

/** A seasonal monthly value per series (level and amplitude differ), `months` months from 2010, the last `hidden` empty. */
function monthly(keys: string[][], months: number, hidden: number): (string | null)[][] {
  const rows: (string | null)[][] = [];
  keys.forEach((key, s) => {
    for (let t = 0; t < months; t++) {
      const value = 100 * (s + 1) + 10 * (s + 1) * Math.sin((2 * Math.PI * t) / 12) + t;
      rows.push([...key, String(2010 + Math.floor(t / 12)), String((t % 12) + 1), t < months - hidden ? value.toFixed(1) : '']);
    }
  });
  return rows;
}

function input(keyColumns: ColumnSpec[], rows: (string | null)[][], extra: Partial<TrainingInput['params']> = {}): TrainingInput {
  return {
    header: [...keyColumns.map((c) => c.name), 'year', 'month', 'value'],
    columns: [...keyColumns, part('year'), part('month'), num('value', 'output')],
    rows,
    params: { seed: 7, ...extra },
  };
}

const panelOf = (r: TrainingResult) => r.selection?.panel;

describe('series identity', () => {
  it('finds a text key under which the time axis repeats, and forecasts each series on its own level', () => {
    const r = trainModel(input([text('store')], monthly([['north'], ['south'], ['east']], 36, 6)));
    expect(panelOf(r)).toMatchObject({ keys: ['store'], keySource: 'detected', series: 3, shortest: 30, longest: 30 });
    for (const [s, store] of ['north', 'south', 'east'].entries()) {
      const values = r.forecasts.filter((f) => f.values.store === store).map((f) => Number(f.values.value));
      expect(values).toHaveLength(6);
      // Each series' level is 100 x (its index + 1): another series' forecast would be 100 away.
      values.forEach((v, j) => {
        const t = 30 + j;
        expect(Math.abs(v - (100 * (s + 1) + 10 * (s + 1) * Math.sin((2 * Math.PI * t) / 12) + t))).toBeLessThan(10);
      });
    }
  });

  it('combines two columns when neither alone names a series (store x product), and takes whole-number ids', () => {
    const keys = [['1', 'a'], ['1', 'b'], ['2', 'a'], ['2', 'b']];
    const r = trainModel(input([num('store'), text('product')], monthly(keys, 30, 3)));
    expect(panelOf(r)).toMatchObject({ keys: ['store', 'product'], series: 4 });
    expect(panelOf(r)?.perSeries.map((s) => s.key)).toEqual(keys);
  });

  it('reads one series with a text input as one series, not a panel', () => {
    const rows = monthly([['x']], 40, 4).map((row, t) => [t % 2 === 0 ? 'sunny' : 'rainy', ...row.slice(1)]);
    expect(panelOf(trainModel(input([text('weather')], rows)))).toBeUndefined();
  });

  it('keeps a series whose stamps repeat, reporting the repeats on that series', () => {
    const rows = monthly([['north'], ['south']], 30, 3);
    rows.splice(10, 0, [...(rows[10] as (string | null)[])]);
    const r = trainModel(input([text('store')], rows));
    expect(panelOf(r)?.series).toBe(2);
    expect(panelOf(r)?.perSeries[0]?.note).toMatch(/1 repeated timestamp: kept the last row/);
    expect(panelOf(r)?.perSeries[1]?.note).toBeUndefined();
  });

  it('makes empty key cells one more series', () => {
    const r = trainModel(input([text('store')], monthly([['north'], ['']], 30, 3)));
    expect(panelOf(r)?.perSeries.map((s) => s.key)).toEqual([['north'], ['']]);
    expect(r.forecasts.filter((f) => f.values.store === '')).toHaveLength(3);
  });
});

describe('bounds', () => {
  it('cuts each series to its most recent rows under a row cap, never whole series', () => {
    const keys = [['a'], ['b'], ['c'], ['d']];
    const r = trainModel(input([text('store')], monthly(keys, 60, 6), { maxKnownRows: 120 }));
    expect(panelOf(r)?.perSeries.map((s) => s.rows)).toEqual([30, 30, 30, 30]);
    expect(r.selection?.timeNotes).toContain('each series cut to its most recent 30 known rows (the row cap of 120 over 4 series)');
    expect(r.forecasts).toHaveLength(24);
  });

  it('answers 20,000 series of 3 rows by carrying each forward, lists the first 1,000 and says why', () => {
    const rows: (string | null)[][] = [];
    for (let s = 0; s < 20_000; s++) for (let y = 0; y < 3; y++) rows.push([`s${s}`, String(2000 + y), '1', y < 2 ? String(s % 97 + y) : '']);
    const r = trainModel(input([text('id')], rows));
    expect(panelOf(r)).toMatchObject({ series: 20_000, shortest: 2, longest: 2 });
    expect(panelOf(r)?.perSeries).toHaveLength(1_000);
    expect(panelOf(r)?.perSeries[0]?.note).toMatch(/too short for a model/);
    expect(r.selection?.timeNotes?.[0]).toMatch(/none of the 20000 series has 5 known rows/);
    expect(r.forecasts[0]?.values).toMatchObject({ id: 's0', year: '2002', value: '1' });
  });
});

describe('a stored panel model', () => {
  it('predicts a row with its own series model after a JSON round trip, and refuses an unknown series', () => {
    const upload = input([text('store')], monthly([['north'], ['south']], 36, 6));
    const r = trainModel(upload);
    const stored = JSON.parse(JSON.stringify(r.model)) as typeof r.model;
    const header = ['store', 'year', 'month', 'value'];
    const [south] = predict(stored, header, [['south', '2012', '7', '']]);
    expect(south?.value).toBe(r.forecasts.find((f) => f.values.store === 'south' && f.values.month === '7')?.values.value);
    expect(() => predict(stored, header, [['west', '2012', '7', '']])).toThrow(/No series store=west/);
  });
});

describe('one structure across the series', () => {
  /** Noisy seasonal series with a trend, each on its own level: each series' few windows rank the families by noise. */
  function noisy(stores: string[]): (string | null)[][] {
    const random = mulberry32(3);
    return stores.flatMap((store, s) =>
      Array.from({ length: 40 }, (_, t) => {
        const value = 50 * (s + 1) + 8 * Math.sin((2 * Math.PI * t) / 12) + 0.4 * t + 6 * (random() - 0.5);
        return [store, String(2010 + Math.floor(t / 12)), String((t % 12) + 1), t < 34 ? value.toFixed(1) : ''];
      }),
    );
  }

  it('gives every series of a panel of at least four the one structure chosen across them, each with its own fit', () => {
    const stores = ['a', 'b', 'c', 'd', 'e'];
    const r = trainModel(input([text('store')], noisy(stores)));
    const panel = panelOf(r);
    expect(Object.values(panel?.wins ?? {})).toEqual([5]);
    const chosen = panel?.perSeries.map((s) => s.outputs[0]?.chosen);
    expect(new Set(chosen).size).toBe(1);
    expect(r.selection?.outputs[0]?.description).toMatch(/ \(chosen across 5 series\); per series over 5 series: \S+ 5$/);
    // The stored model of each series holds its own fit of the members.
    const states = ((r.model as TrainedModelV2).engine as PanelState).series.map((s) => JSON.stringify(s.engine?.outputs[0]?.members.map((m) => m.state)));
    expect(new Set(states).size).toBe(5);
  });

  it('leaves each series of a panel of fewer than four its own winner', () => {
    const r = trainModel(input([text('store')], noisy(['a', 'b', 'c'])));
    expect(r.selection?.outputs[0]?.description).toMatch(/^per series over 3 series: /);
  });

  it("has a panel's series try the seasonal naives only where their differences show the season, and a single series always", () => {
    // Side by side, 8 years of months: a price that walks (no year in it) and a series with a yearly swing.
    const random = mulberry32(11);
    let price = 100;
    const rows = Array.from({ length: 96 }, (_, t) => {
      price += 4 * (random() - 0.5);
      const swing = 50 + 10 * Math.sin((2 * Math.PI * t) / 12) + 0.2 * t + 2 * (random() - 0.5);
      return [String(2010 + Math.floor(t / 12)), String((t % 12) + 1), ...(t < 90 ? [price.toFixed(2), swing.toFixed(2)] : ['', ''])];
    });
    const wide: TrainingInput = {
      header: ['year', 'month', 'price', 'swing'],
      columns: [part('year'), part('month'), num('price', 'output'), num('swing', 'output')],
      rows,
      params: { seed: 7 },
    };
    const candidates = (r: TrainingResult, column: string) => r.selection?.outputs.find((o) => o.column === column)?.candidates.map((c) => c.name) ?? [];
    const seasonalNaives = ['seasonal_naive', 'seasonal_drift'];
    const both = trainModel(wide);
    expect(candidates(both, 'swing')).toEqual(expect.arrayContaining(seasonalNaives));
    expect(candidates(both, 'price')).toEqual(expect.arrayContaining(['naive', 'drift']));
    for (const name of seasonalNaives) expect(candidates(both, 'price')).not.toContain(name);
    // The same walk uploaded alone is one series, whose own choice keeps every candidate.
    const alone = trainModel({ ...wide, header: ['year', 'month', 'price'], columns: wide.columns.slice(0, 3), rows: rows.map((r) => r.slice(0, 3)) });
    expect(candidates(alone, 'price')).toEqual(expect.arrayContaining(seasonalNaives));
  });

  it("gives a panel's series windows that span its longest cycle, where 3 would span a stretch of it, and a single series 3", () => {
    // Side by side, 124 weeks (a yearly cycle of 52.18 weeks twice over), the last 4 empty: 4-week windows need 14 to span the year.
    const random = mulberry32(5);
    const day = (t: number) => new Date(Date.UTC(2015, 0, 5 + 7 * t));
    const rows = Array.from({ length: 124 }, (_, t) => {
      const d = day(t);
      const year = (k: number) => (100 * k + 20 * Math.sin((2 * Math.PI * t) / 52.18) + 5 * (random() - 0.5)).toFixed(2);
      return [String(d.getUTCFullYear()), String(d.getUTCMonth() + 1), String(d.getUTCDate()), ...(t < 120 ? [year(1), year(2)] : ['', ''])];
    });
    const dayPart: ColumnSpec = { name: 'day', role: 'date', kind: 'numeric', datePart: 'day' };
    const wide: TrainingInput = {
      header: ['year', 'month', 'day', 'a', 'b'],
      columns: [part('year'), part('month'), dayPart, num('a', 'output'), num('b', 'output')],
      rows,
      params: { seed: 7 },
    };
    const both = trainModel(wide);
    expect(both.selection).toMatchObject({ frequency: 'weekly', horizon: 4, windows: 14 });
    const alone = trainModel({ ...wide, header: wide.header.slice(0, 4), columns: wide.columns.slice(0, 4), rows: rows.map((r) => r.slice(0, 4)) });
    expect(alone.selection).toMatchObject({ horizon: 4, windows: 3 });
    expect(seriesPlan(2, 248).cycleWindows).toBe(true);
    // A panel big enough to be cut to fewer windows keeps its tier.
    expect(seriesPlan(1_000, 120_000)).toMatchObject({ windows: 1, cycleWindows: false });
  });

  it('tries the costly families on a small panel, and the autoregressions on a series without a cycle in any panel', () => {
    const names = (plan: ReturnType<typeof seriesPlan>, periods: number[]) =>
      plan.choose('numeric', { timeOrdered: true, frequency: periods.length ? 'monthly' : 'annual', season: periods[0] ?? 1, periods, horizon: 6 }, 50).map((f) => f.name);
    const autoregressions = ['ar', 'linear_ar', 'linear_diff'];
    expect(names(seriesPlan(14, 1_708), [12])).toEqual(expect.arrayContaining(['sarima', ...autoregressions]));
    // 214 countries' annual population: the autoregressions without a season are ridge fits on a few columns.
    expect(names(seriesPlan(214, 13_054), [])).toEqual(expect.arrayContaining(['naive', 'drift', 'linear', 'theta', 'ets', ...autoregressions]));
    expect(names(seriesPlan(214, 13_054), [])).not.toContain('sarima');
    for (const name of [...autoregressions, 'sarima', 'mstl', 'harmonic']) expect(names(seriesPlan(1_000, 120_000), [12])).not.toContain(name);
    expect(names(seriesPlan(214, 13_054), [])).not.toContain('network');
  });
});

describe('a job in parts, unit by unit', () => {
  it('reports the assembly moving as it reads each refitted part, and assembles what one thread trains', () => {
    const keys = Array.from({ length: 6 }, (_, s) => [`s${s}`]);
    const upload = input([text('site')], monthly(keys, 48, 6));
    const planned = planTraining(upload, {}, 2, 50);
    if (planned.kind !== 'parts') throw new Error('the panel was not cut into parts');
    const { job } = planned;
    const rounds = job.global ? Array.from({ length: job.rounds }, (_, r) => runRoundUnit(job.global as string, r)) : [];
    const scores = job.parts.map((p) => runScoreUnit(p.task, rounds));
    const choice = runChooseUnit(job.choice, scores);
    const refits = job.parts.map((p, k) => runFitUnit(p.task, scores[k] as string, choice));
    expect(refits.length).toBeGreaterThanOrEqual(3);

    const advances: number[] = [];
    const result = assembleUnit(job.plan, refits, 0, { onProgress: (p) => advances.push(p.advance), progressIntervalMs: 0 });
    // One report per part read and one once the series are put together, rising, never 100 (the job's end is its Finished).
    expect(advances.length).toBeGreaterThanOrEqual(refits.length + 2);
    expect(advances).toEqual([...advances].sort((a, b) => a - b));
    expect(advances.filter((a) => a > 0 && a < 100).length).toBeGreaterThanOrEqual(refits.length + 1);
    expect(advances.at(-1)).toBeGreaterThanOrEqual(90);
    expect(advances.at(-1)).toBeLessThan(100);
    expect(result.forecasts.map((f) => f.values)).toEqual(trainModel(upload).forecasts.map((f) => f.values));
  });
});
