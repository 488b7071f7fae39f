import { describe, expect, it } from 'vitest';
import type { Backtest } from '../../src/training/selection/backtest.js';
import { trainModel } from '../../src/training/run/engine.js';
import type { EngineState } from '../../src/training/series/forecaster.js';
import type { FitRows, ModelFamily } from '../../src/training/models/model.js';
import { naiveFamilies } from '../../src/training/models/naive.js';
import { predict } from '../../src/training/run/predict.js';
import { mulberry32 } from '../../src/training/core/prng.js';
import { choosePanel, type SeriesScores } from '../../src/training/panel/panel-part.js';
import { differencedFamily } from '../../src/training/models/differenced.js';
import { kpssDifferences } from '../../src/training/stats/stationarity.js';
import { differencedArFamily } from '../../src/training/models/differenced-ar.js';
import { chooseWinner, pooledWinner, pooledWinners, splitActuals, splitsError, type Scored } from '../../src/training/selection/selection.js';
import type { TrainedModelV2 } from '../../src/training/core/types.js';
import { rowsOf, seasonContext } from './family-support.js';

/** One window of four rows, all 0: each candidate's backtest error is its mean absolute prediction. */
const backtest: Backtest = { scheme: 'rolling-origin', splits: [{ fit: [0, 1, 2, 3], test: [4, 5, 6, 7], steps: [1, 2, 3, 4] }], horizon: 4 };
const data: FitRows = { time: [0, 1, 2, 3, 4, 5, 6, 7], features: Array.from({ length: 8 }, () => []), target: [0, 0, 0, 0, 0, 0, 0, 0] };

const scored = (name: string, predictions: number[]): Scored => ({
  family: { name } as ModelFamily,
  predictions: [predictions],
  error: predictions.reduce((s, p) => s + Math.abs(p), 0) / predictions.length,
  description: name,
});

describe('model selection: combinations of the best candidates', () => {
  it('takes the median of the best 3 when each runs away on a different row', () => {
    // Each candidate misses one row by 4 (error 1); any weighted mean keeps 4/3 on three rows (error 1), the
    // median is exact.
    const winner = chooseWinner([scored('a', [4, 0, 0, 0]), scored('b', [0, 4, 0, 0]), scored('c', [0, 0, 4, 0]), scored('d', [2, 2, 2, 2])], backtest, data, 'numeric');
    expect(winner.combine).toBe('median');
    expect(winner.members.map((m) => m.family.name)).toEqual(['a', 'b', 'c']);
    expect(winner.predictions).toEqual([[0, 0, 0, 0]]);
    expect(winner.error).toBe(0);
    expect(winner.description).toBe('median of a, b, c');
  });

  it('keeps the inverse-error weighted combination when the median is no better', () => {
    // Two candidates that err in opposite directions: their mean is exact; the median of 3 is not.
    const winner = chooseWinner([scored('a', [1, 1, 1, 1]), scored('b', [-1, -1, -1, -1]), scored('c', [3, 3, 3, 3])], backtest, data, 'numeric');
    expect(winner.combine).toBeUndefined();
    expect(winner.members.map((m) => [m.family.name, m.weight])).toEqual([
      ['a', 0.5],
      ['b', 0.5],
    ]);
    expect(winner.error).toBe(0);
  });

  it('leaves the level families out of combinations when a panel asks, yet lets one win alone', () => {
    // a and b err in opposite directions; the level family `mean` ranks second: by default it joins a's
    // combination, which a panel's series never lets it do (the next non-level candidate, b, joins instead).
    const candidates = [scored('a', [1, 1, 1, 1]), scored('mean', [-1.5, -1.5, -1.5, -1.5]), scored('b', [-2, -2, -2, -2])];
    const members = (winner: ReturnType<typeof chooseWinner>) => winner.members.map((m) => m.family.name);
    expect(members(chooseWinner(candidates, backtest, data, 'numeric'))).toEqual(['a', 'mean']);
    expect(members(chooseWinner(candidates, backtest, data, 'numeric', { levelsInCombinations: false }))).toEqual(['a', 'b']);
    const alone = [scored('median', [1, 0, 0, 0]), scored('a', [2, 2, 2, 2]), scored('b', [3, 3, 3, 3])];
    expect(members(chooseWinner(alone, backtest, data, 'numeric', { levelsInCombinations: false }))).toEqual(['median']);
  });

  it('keeps a single candidate that no combination beats', () => {
    const winner = chooseWinner([scored('a', [1, 0, 0, 0]), scored('b', [2, 2, 2, 2]), scored('c', [3, 3, 3, 3])], backtest, data, 'numeric');
    expect(winner.combine).toBeUndefined();
    expect(winner.members.map((m) => m.family.name)).toEqual(['a']);
  });
});

describe('one choice across many series', () => {
  // Four series on the same window, actual 0 everywhere, each with the scale 1: `steady` errs by 1 on every
  // series; `lucky` is exact on one series and errs by 3 on the others, so each series alone would pick
  // `lucky` once and `steady` three times, while across the series `steady` is the better family.
  const output = (lucky: boolean): { scored: Scored[]; actual: number[][]; scale: number } => ({
    scored: [scored('lucky', lucky ? [0, 0, 0, 0] : [3, 3, 3, 3]), scored('steady', [1, 1, 1, 1]), scored('wild', [5, -5, 5, -5])],
    actual: splitActuals(backtest, data.target as number[]),
    scale: 1,
  });

  it('gives every series the structure with the lowest mean scaled backtest error, with its own members', () => {
    const outputs = [output(true), output(false), output(false), output(false)];
    expect(chooseWinner(outputs[0]!.scored, backtest, data, 'numeric').members.map((m) => m.family.name)).toEqual(['lucky']);
    const winners = pooledWinners(outputs)!;
    expect(winners.map((w) => w.members.map((m) => m.family.name))).toEqual([['steady'], ['steady'], ['steady'], ['steady']]);
    expect(winners[0]!.predictions).toEqual([[1, 1, 1, 1]]);
    expect(winners[0]!.error).toBe(1);
  });

  it('lets the value columns of a wide upload choose together: one family, each column with its own fit', () => {
    // A trend, a level, a season and a random walk: alone they pick four different families (ets, mean, ar,
    // drift); together the structure with the lowest mean scaled backtest error (the median of ETS, ETS on
    // logarithms and SARIMA), each column with its own fits.
    const random = mulberry32(7);
    let walk = 50;
    const rows = Array.from({ length: 66 }, (_, i) => {
      walk += random() * 4 - 2;
      const values = [10 + 0.5 * i + random() * 3, 20 + random() * 6, 30 + 8 * Math.sin((2 * Math.PI * i) / 12) + random() * 2, walk];
      return [String(2000 + Math.floor(i / 12)), String((i % 12) + 1), ...values.map((v) => (i < 60 ? v.toFixed(1) : null))];
    });
    const result = trainModel({
      header: ['year', 'month', 'a', 'b', 'c', 'd'],
      columns: [
        { name: 'year', role: 'date', kind: 'numeric', datePart: 'year' },
        { name: 'month', role: 'date', kind: 'numeric', datePart: 'month' },
        ...['a', 'b', 'c', 'd'].map((name) => ({ name, role: 'output' as const, kind: 'numeric' as const })),
      ],
      rows,
      params: {},
    });
    const outputs = result.selection!.outputs;
    expect(outputs.map((o) => o.description)).toEqual(Array(4).fill('median of ets, log_ets, sarima (chosen across 4 series)'));
    // Each column's own fits: the season column's forecasts swing with its season, the level's stay flat.
    const range = (name: string) => {
      const values = result.forecasts.map((f) => Number(f.values[name]));
      return Math.max(...values) - Math.min(...values);
    };
    expect(range('c'), `c ${range('c')}, b ${range('b')}`).toBeGreaterThan(8);
    expect(range('b'), `c ${range('c')}, b ${range('b')}`).toBeLessThan(3);
  });

  it('leaves fewer than four series, or families that did not score on every series, to each series', () => {
    expect(pooledWinners([output(true), output(false), output(false)])).toBeNull();
    const missing = { ...output(false), scored: output(false).scored.map((s) => (s.family.name === 'steady' ? { ...s, predictions: null, error: null } : s)) };
    const winners = pooledWinners([output(true), output(false), output(false), missing])!;
    expect(winners.every((w) => w.members.every((m) => m.family.name !== 'steady'))).toBe(true);
  });
});

describe("auto.arima's differencing as a structure across series", () => {
  it('chooses d as forecast::ndiffs does: the mean of a level, a random walk, the last slope of an accelerating series', () => {
    const random = mulberry32(11);
    const level = Array.from({ length: 13 }, () => 100 + 10 * (random() - 0.5));
    const accelerating = Array.from({ length: 11 }, (_, i) => 1000 + 20 * i * i + 5 * (random() - 0.5));
    let walk = 50;
    const walking = Array.from({ length: 40 }, () => (walk += 6 + 4 * (random() - 0.5)));
    expect([level, walking, accelerating].map(kpssDifferences)).toEqual([0, 1, 2]);
    const ahead = (y: number[], h: number) => differencedFamily.fit(rowsOf(y), seasonContext(1)).predict({ time: [y.length - 1 + h], features: [[]] })[0] as number;
    expect(ahead(level, 3)).toBeCloseTo(level.reduce((a, b) => a + b, 0) / level.length, 9);
    // A steady climb: the drift (its mean difference) passes AICc, and carries on from the last value.
    const drift = (walking.at(-1)! - walking[0]!) / (walking.length - 1);
    expect(ahead(walking, 2)).toBeCloseTo(walking.at(-1)! + 2 * drift, 9);
    const slope = accelerating.at(-1)! - accelerating.at(-2)!;
    expect(ahead(accelerating, 4)).toBeCloseTo(accelerating.at(-1)! + 4 * slope, 9);
    // A stored state forecasts the same.
    const fitted = differencedFamily.fit(rowsOf(accelerating), seasonContext(1));
    const revived = differencedFamily.revive(JSON.parse(JSON.stringify(fitted.state)) as typeof fitted.state);
    expect(revived.predict({ time: [13], features: [[]] })).toEqual(fitted.predict({ time: [13], features: [[]] }));
  });

  it("competes in the choice across series but never in one series' own choice", () => {
    // `differenced` is exact on every series: across four series it is the structure; alone, a series keeps the
    // best of the others.
    const output = () => ({ scored: [scored('naive', [1, 1, 1, 1]), scored('differenced', [0, 0, 0, 0])], actual: splitActuals(backtest, data.target as number[]), scale: 1 });
    expect(chooseWinner(output().scored, backtest, data, 'numeric').members.map((m) => m.family.name)).toEqual(['naive']);
    const winners = pooledWinners([output(), output(), output(), output()])!;
    expect(winners.map((w) => w.members.map((m) => m.family.name))).toEqual([['differenced'], ['differenced'], ['differenced'], ['differenced']]);
  });

  it('adds AR terms on the differences, p by AICc: a growth that slows is forecast slowing, not carried on', () => {
    const random = mulberry32(7);
    let slope = 400;
    let level = 10_000;
    // Each year's growth is 0.93 of the last one's, plus noise: second differences that are autocorrelated.
    const slowing = Array.from({ length: 40 }, () => {
      level += slope;
      slope = 0.93 * slope + 10 * (random() - 0.5);
      return Math.round(level);
    });
    const fitted = differencedArFamily.fit(rowsOf(slowing), seasonContext(1));
    expect(fitted.state.d).toBe(2);
    expect(fitted.state.phi.length).toBeGreaterThan(0);
    expect(fitted.describe()).toBe(`ARIMA(${fitted.state.phi.length},2,0), d by KPSS, p by AICc`);
    const at = (h: number) => fitted.predict({ time: [slowing.length - 1 + h], features: [[]] })[0] as number;
    const last = slowing.at(-1)!;
    const lastSlope = last - slowing.at(-2)!;
    // The 6th year ahead: above the last value, below the last slope carried on (`differenced`'s ARIMA(0,2,0)).
    const carried = differencedFamily.fit(rowsOf(slowing), seasonContext(1)).predict({ time: [slowing.length + 5], features: [[]] })[0] as number;
    expect(carried).toBeCloseTo(last + 6 * lastSlope, 6);
    expect(at(6)).toBeGreaterThan(last);
    expect(at(6)).toBeLessThan(carried);
    // Each step is the AR model of the second differences, integrated: z_t = c + sum phi_j z_t-j, y_t = z_t + 2 y_t-1 - y_t-2.
    const values = [...slowing];
    for (let h = 1; h <= 6; h++) {
      const t = values.length;
      const z = (s: number) => values[s]! - 2 * values[s - 1]! + values[s - 2]!;
      const next = fitted.state.phi.reduce((sum, f, j) => sum + f * z(t - 1 - j), fitted.state.c) + 2 * values[t - 1]! - values[t - 2]!;
      values.push(next);
      expect(at(h)).toBeCloseTo(next, 6);
    }
    const revived = differencedArFamily.revive(JSON.parse(JSON.stringify(fitted.state)) as typeof fitted.state);
    expect(revived.predict({ time: [41, 45], features: [[], []] })).toEqual(fitted.predict({ time: [41, 45], features: [[], []] }));
    // Only where the series has no cycle: a seasonal series is SARIMA's.
    expect(differencedArFamily.applies({ ...seasonContext(12).info, periods: [12] }, 120)).toBe(false);
    expect(differencedArFamily.applies(seasonContext(1).info, 40)).toBe(true);
  });

  it('is a candidate of a panel of at least four series, and of no single series', () => {
    const random = mulberry32(5);
    const rows = ['a', 'b', 'c', 'd'].flatMap((key, s) =>
      Array.from({ length: 14 }, (_, i) => [key, String(1900 + 10 * i), i < 12 ? (1000 * (s + 1) + 40 * i * i + 30 * random()).toFixed(0) : null]),
    );
    const columns = [
      { name: 'key', role: 'input' as const, kind: 'categorical' as const },
      { name: 'year', role: 'date' as const, kind: 'numeric' as const, datePart: 'year' as const },
      { name: 'value', role: 'output' as const, kind: 'numeric' as const },
    ];
    const panel = trainModel({ header: ['key', 'year', 'value'], columns, rows, params: {} });
    expect(panel.selection!.outputs[0]!.candidates.map((c) => c.name)).toEqual(expect.arrayContaining(['differenced', 'differenced_ar']));
    const one = trainModel({ header: ['key', 'year', 'value'], columns, rows: rows.filter((r) => r[0] === 'a'), params: {} });
    expect(one.selection!.panel).toBeUndefined();
    expect(one.selection!.outputs[0]!.candidates.map((c) => c.name)).not.toContain('differenced');
    expect(one.selection!.outputs[0]!.candidates.map((c) => c.name)).not.toContain('differenced_ar');
  });
});

describe("one choice across a long panel's series", () => {
  // Five series, each on its own windows (1 to 3 splits of 2 to 4 rows), scales and values; five families whose
  // backtest predictions miss by noise that grows with the family's rank, so each series alone ranks them by luck.
  const random = mulberry32(11);
  const families = ['naive', 'drift', 'ets', 'theta', 'mean'];
  const layouts = [[4], [3, 3], [2, 2, 2], [4, 4], [3]];
  const series = layouts.map((tests, k) => {
    const actual = tests.map((n) => Array.from({ length: n }, () => Math.round(1000 * random()) / 10));
    const scored: Scored[] = families.map((name, f) => {
      const predictions = actual.map((split) => split.map((a) => a + (random() - 0.5) * (f + 1) * (k + 1)));
      return { family: { name } as ModelFamily, predictions, error: splitsError(actual, predictions), description: `${name} fitted on series ${k}` };
    });
    return { scored, actual, scale: 0.5 + k };
  });
  /** The series as the score parts answer them (panel-part.ts SeriesScores): plain data, through JSON. */
  const scoresOf = (list: typeof series): SeriesScores[] =>
    JSON.parse(
      JSON.stringify(
        list.map((s, index) => ({
          index,
          timeOrdered: true,
          outputs: [{ column: 'y', kind: 'numeric', scale: s.scale, actual: s.actual, candidates: s.scored.map((c) => ({ name: c.family.name, error: c.error, predictions: c.predictions, description: c.description })) }],
        })),
      ),
    ) as SeriesScores[];
  const options = { pooled: true, levelsInCombinations: false };

  it('chooses over series on different windows what pooledWinners chooses on the same inputs, each series with its own members', () => {
    const choice = choosePanel(scoresOf(series), options);
    expect(choice.columns.map((c) => c.column)).toEqual(['y']);
    const structure = choice.columns[0]!.structure!;
    expect(structure.series).toBe(5);
    const winners = series.map((s) => pooledWinner(structure, s.scored, s.actual));
    expect(winners).toEqual(pooledWinners(series, options));
    // Each series keeps its own fits of the members, and the report says the structure was chosen across the series.
    expect(winners.map((w) => w.members.map((m) => m.family.name))).toEqual(series.map(() => structure.members));
    expect(winners[1]!.predictions).not.toEqual(winners[3]!.predictions);
    expect(winners[0]!.description).toMatch(/\(chosen across 5 series\)$/);
  });

  it('leaves fewer than four series, and a panel that does not choose together, to their own winners', () => {
    expect(choosePanel(scoresOf(series.slice(0, 3)), options).columns).toEqual([{ column: 'y', structure: null }]);
    expect(choosePanel(scoresOf(series), { ...options, pooled: false }).columns).toEqual([]);
  });
});

describe('a stored median combination', () => {
  it('forecasts the median of its members at each row, also after a JSON round trip', () => {
    const rows = Array.from({ length: 24 }, (_, i) => [String(2000 + i), String(i)]);
    const model = trainModel({
      header: ['Year', 'y'],
      columns: [
        { name: 'Year', role: 'date', kind: 'numeric', datePart: 'year' },
        { name: 'y', role: 'output', kind: 'numeric' },
      ],
      rows: [...rows, ['2024', null]],
      params: {},
    }).model as TrainedModelV2;
    // Three last values, 0, 1 and 8: the median is 1 where the equal-weight mean would be 3.
    const naive = naiveFamilies.find((f) => f.name === 'naive')!;
    const last = (v: number) => naive.fit({ ...rowsOf([v, v]), time: [22, 23] }, seasonContext(1)).state;
    const engine = model.engine as EngineState;
    const output = engine.outputs[0]!;
    output.members = [0, 1, 8].map((v) => ({ family: 'naive', weight: 1 / 3, state: last(v) }));
    output.combine = 'median';
    const stored = JSON.parse(JSON.stringify(model)) as TrainedModelV2;
    expect(predict(stored, ['Year', 'y'], [['2024', '']]).map((r) => Number(r.y))).toEqual([1]);
    delete (stored.engine as EngineState).outputs[0]!.combine;
    expect(predict(stored, ['Year', 'y'], [['2024', '']]).map((r) => Number(r.y))).toEqual([3]);
  });
});
