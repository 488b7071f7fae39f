import { describe, expect, it } from 'vitest';
import { explainSelection } from '../../src/domain/jobs/explanation.js';
import { trainModel } from '../../src/training/run/engine.js';
import { intervalWidths, smallPoolWidths, type StepErrors } from '../../src/training/selection/intervals.js';
import { familiesFor } from '../../src/training/models/candidates.js';
import { arFamily, selectArOrder } from '../../src/training/models/linear.js';
import { NAIVE_NAMES } from '../../src/training/models/naive.js';
import { predict, predictWithIntervals } from '../../src/training/run/predict.js';
import { mulberry32 } from '../../src/training/core/prng.js';
import { seasonContext } from './family-support.js';
import type { ColumnSpec, TrainingProgress, TrainingResult } from '../../src/training/core/types.js';

/** Errors by horizon step as backtest windows give them: the j-th error of a step from window j. */
const table = (errorsByStep: number[][]): StepErrors[] => errorsByStep.map((errors) => ({ errors, windows: errors.map((_, j) => j) }));

const monthly = (i: number) => {
  const year = 2000 + Math.floor(i / 12);
  return `${year}-${String((i % 12) + 1).padStart(2, '0')}-01`;
};
const DATE_Y: ColumnSpec[] = [
  { name: 'Date', role: 'date', kind: 'numeric' },
  { name: 'y', role: 'output', kind: 'numeric' },
];

/** A monthly upload of `values`, the last `hidden` of them left empty. */
function series(values: number[], hidden: number) {
  const rows = values.map((v, i) => [monthly(i), i < values.length - hidden ? v.toFixed(3) : '']);
  return { header: ['Date', 'y'], columns: DATE_Y, rows, truth: values.slice(values.length - hidden) };
}

const forecastOf = (r: TrainingResult) => r.forecasts.map((f) => Number(f.values.y));
const mae = (a: number[], b: number[]) => a.reduce((s, v, i) => s + Math.abs(v - (b[i] as number)), 0) / a.length;
const SEASON = [5, 3, 8, 12, 15, 20, 22, 21, 16, 10, 6, 4];

describe('forecasting engine: model families on series with a known answer', () => {
  it('extrapolates a pure trend exactly (y = 2x + 1, two rows to forecast)', () => {
    const rows = Array.from({ length: 30 }, (_, i) => [String(i + 1), i < 28 ? String(2 * (i + 1) + 1) : '']);
    const columns: ColumnSpec[] = [
      { name: 'x', role: 'input', kind: 'numeric' },
      { name: 'y', role: 'output', kind: 'numeric' },
    ];
    const r = trainModel({ header: ['x', 'y'], columns, rows, params: {} });
    expect(forecastOf(r)).toEqual([59, 61]);
    expect(r.successRate).toBe(100);
    expect(r.selection?.outputs[0]?.description).toMatch(/^ridge regression/);
  });

  it('repeats a pure season with a seasonal model', () => {
    const s = series(Array.from({ length: 84 }, (_, i) => SEASON[i % 12] as number), 12);
    const r = trainModel({ ...s, params: {} });
    expect(mae(forecastOf(r), s.truth)).toBeLessThan(0.01);
    const chosen = r.selection?.outputs[0];
    expect(chosen?.error).toBeLessThan(0.01);
    expect(r.selection).toMatchObject({ scheme: 'rolling-origin', frequency: 'monthly', season: 12, horizon: 12, windows: 3 });
  });

  it('beats seasonal naive on trend + season + noise', () => {
    const random = mulberry32(3);
    const values = Array.from({ length: 120 }, (_, i) => 100 + 0.8 * i + (SEASON[i % 12] as number) + (random() - 0.5) * 3);
    const s = series(values, 12);
    const r = trainModel({ ...s, params: {} });
    const seasonalNaive = s.truth.map((_, h) => values[values.length - 24 + h] as number);
    expect(mae(forecastOf(r), s.truth)).toBeLessThan(mae(seasonalNaive, s.truth) / 3);
    const out = r.selection?.outputs[0];
    expect(out?.error).toBeLessThanOrEqual(out?.baseline.error as number);
  });

  it('picks a naive model on a random walk', () => {
    const random = mulberry32(9);
    let level = 50;
    const values = Array.from({ length: 200 }, () => (level += (random() - 0.5) * 4));
    const r = trainModel({ ...series(values, 10), params: {} });
    const out = r.selection?.outputs[0];
    expect(out?.error).toBeLessThanOrEqual((out?.baseline.error as number) + 1e-9);
    expect(out?.error).toBeGreaterThan((out?.baseline.error as number) * 0.9);
  });

  it('forecasts a skewed target without signal by its median, the constant with the least absolute error', () => {
    // Delay-like values: mostly small, a long tail of large ones; the input carries no information.
    const random = mulberry32(5);
    const values = Array.from({ length: 300 }, () => Math.round((-Math.log(1 - random())) ** 2 * 10));
    const rows = values.map((v, i) => [String(Math.floor(random() * 100)), i % 5 === 4 ? '' : String(v)]);
    const columns: ColumnSpec[] = [
      { name: 'x', role: 'input', kind: 'numeric' },
      { name: 'y', role: 'output', kind: 'numeric' },
    ];
    const r = trainModel({ header: ['x', 'y'], columns, rows, params: {} });
    const known = values.filter((_, i) => i % 5 !== 4).sort((a, b) => a - b);
    const median = (known[known.length / 2 - 1]! + known[known.length / 2]!) / 2;
    const mean = known.reduce((a, b) => a + b, 0) / known.length;
    expect(mean).toBeGreaterThan(median + 5);
    expect(r.selection?.outputs[0]?.chosen).toBe('median');
    expect(new Set(forecastOf(r))).toEqual(new Set([median]));
    const hidden = values.filter((_, i) => i % 5 === 4);
    expect(mae(forecastOf(r), hidden)).toBeLessThan(mae(hidden.map(() => mean), hidden));
  });

  it('forecasts a categorical output, never worse than the majority class', () => {
    const random = mulberry32(4);
    const rows = Array.from({ length: 120 }, (_, i) => {
      const x = random() * 10;
      return [x.toFixed(2), i < 110 ? (x > 5 ? 'high' : 'low') : ''];
    });
    const columns: ColumnSpec[] = [
      { name: 'x', role: 'input', kind: 'numeric' },
      { name: 'band', role: 'output', kind: 'categorical' },
    ];
    const r = trainModel({ header: ['x', 'band'], columns, rows, params: {} });
    const out = r.selection?.outputs[0];
    expect(out).toMatchObject({ kind: 'categorical', metric: 'error rate' });
    expect(out?.error).toBeLessThanOrEqual(out?.baseline.error as number);
    expect(r.forecasts).toHaveLength(10);
    expect(r.forecasts.every((f) => f.values.band === 'high' || f.values.band === 'low')).toBe(true);
    expect(r.selection?.scheme).toBe('k-fold');
  });
});

describe('forecasting engine: seasons, long cycles and the naive bar', () => {
  /** A quarterly upload (year and month columns, a row every 3 months) of `values`, the last `hidden` empty. */
  function quarterly(values: number[], hidden: number) {
    const columns: ColumnSpec[] = [
      { name: 'year', role: 'date', kind: 'numeric', datePart: 'year' },
      { name: 'month', role: 'date', kind: 'numeric', datePart: 'month' },
      { name: 'y', role: 'output', kind: 'numeric' },
    ];
    const rows = values.map((v, i) => [String(1990 + Math.floor(i / 4)), String(3 * (i % 4) + 1), i < values.length - hidden ? v.toFixed(3) : '']);
    return { header: ['year', 'month', 'y'], columns, rows, truth: values.slice(values.length - hidden) };
  }

  it('treats quarterly data as a season of 4 and forecasts it far better than last value', () => {
    const random = mulberry32(4);
    const pattern = [12, -8, 5, -9];
    const values = Array.from({ length: 60 }, (_, i) => 200 + 0.5 * i + (pattern[i % 4] as number) + (random() - 0.5) * 2);
    const s = quarterly(values, 8);
    const r = trainModel({ ...s, params: {} });
    expect(r.selection?.season).toBe(4);
    const lastValue = s.truth.map(() => values[values.length - 9] as number);
    expect(mae(forecastOf(r), s.truth)).toBeLessThan(mae(lastValue, s.truth) / 4);
  });

  it('picks the autoregressive order as statsmodels ar_select_order does on an AR(2) with a 10-step cycle', () => {
    const random = mulberry32(11);
    const y: number[] = [0, 0];
    for (let i = 2; i < 300; i++) y.push(1.6 * (y[i - 1] as number) - 0.9 * (y[i - 2] as number) + (random() - 0.5));
    const time = y.map((_, i) => i);
    // ar_select_order(y, 24, ic='aic', trend='c') on these 300 values: lags 1..6 (the sample after lag 24).
    expect(selectArOrder(time, y, 1, 24)).toEqual({ p: 6, trend: false });
    // With at most 2 lags it is the process's own order.
    expect(selectArOrder(time, y, 1, 2)).toEqual({ p: 2, trend: false });
  });

  it('forecasts an annual series with a cycle longer than any season by a long autoregression', () => {
    const random = mulberry32(12);
    const values = Array.from({ length: 140 }, (_, i) => 50 + 10 * Math.sin((2 * Math.PI * i) / 11) + (random() - 0.5) * 3);
    const rows = values.map((v, i) => [String(1870 + i), i < 130 ? v.toFixed(3) : '']);
    const columns: ColumnSpec[] = [
      { name: 'year', role: 'date', kind: 'numeric', datePart: 'year' },
      { name: 'y', role: 'output', kind: 'numeric' },
    ];
    const r = trainModel({ header: ['year', 'y'], columns, rows, params: {} });
    const truth = values.slice(130);
    const drift = truth.map((_, h) => (values[129] as number) + ((h + 1) * ((values[129] as number) - (values[0] as number))) / 129);
    expect(mae(forecastOf(r), truth)).toBeLessThan(mae(drift, truth) / 3);
    const ar = r.selection?.outputs[0]?.candidates.find((c) => c.name === 'ar');
    expect(ar?.error).toBeLessThan(r.selection?.outputs[0]?.baseline.error as number);
  });

  it('fits the long autoregression on a series alone, and forecasts it whatever features the rows to forecast carry', () => {
    const random = mulberry32(14);
    const values = Array.from({ length: 200 }, (_, i) => 60 + 15 * Math.sin((2 * Math.PI * i) / 23) + (random() - 0.5) * 4);
    // Calendar-like terms, as the engine gives a daily series (the year's sine and cosine).
    const calendar = (t: number) => [Math.sin((2 * Math.PI * t) / 365.25), Math.cos((2 * Math.PI * t) / 365.25)];
    const time = values.map((_, i) => i);
    const ahead = Array.from({ length: 28 }, (_, h) => 200 + h);
    const context = seasonContext(1, 28);
    const fitted = arFamily.fit({ time, features: time.map(() => []), target: values }, context);
    const forecast = fitted.predict({ time: ahead, features: ahead.map(calendar) }) as number[];
    expect(forecast).toEqual(fitted.predict({ time: ahead, features: ahead.map(() => []) }));
    // Near the series' level and cycle, not the few units the calendar terms in the lags' places gave.
    const truth = ahead.map((t) => 60 + 15 * Math.sin((2 * Math.PI * t) / 23));
    expect(mae(forecast, truth)).toBeLessThan(5);
    // Rows with features are linear_ar's, which uses them.
    expect(() => arFamily.fit({ time, features: time.map(calendar), target: values }, context)).toThrow(/calendar terms or inputs/);
  });

  it('never publishes a model worse on its backtest than the best naive baseline it could choose', () => {
    const random = mulberry32(13);
    let level = 100;
    const uploads = [
      Array.from({ length: 120 }, () => (level += (random() - 0.5) * 6)),
      Array.from({ length: 60 }, () => 30 + (random() - 0.5) * 10),
      Array.from({ length: 96 }, (_, i) => 10 + (SEASON[i % 12] as number) * (1 + (random() - 0.5) * 0.6)),
    ];
    for (const values of uploads) {
      const out = trainModel({ ...series(values, 12), params: {} }).selection?.outputs[0];
      const naive = out?.candidates.filter((c) => NAIVE_NAMES.has(c.name) && c.error !== null).map((c) => c.error as number) ?? [];
      expect(naive.length).toBeGreaterThan(2);
      expect(out?.error).toBeLessThanOrEqual(Math.min(...naive) + 1e-9);
      // Nothing beat them: the published model is that baseline (or a combination no worse).
      if (out?.candidates.every((c) => NAIVE_NAMES.has(c.name) || c.error === null || c.error >= Math.min(...naive))) {
        expect(out?.chosen === 'combination' || NAIVE_NAMES.has(out?.chosen)).toBe(true);
      }
    }
  });
});

describe('forecasting engine: intervals that hold what they say on series of known distribution', () => {
  /** Pooled coverage of the 80% and 95% intervals over `count` series of a level plus normal noise. */
  function coverage(count: number, length: number, hidden: number, seed: number) {
    let rows = 0;
    let in80 = 0;
    let in95 = 0;
    for (let k = 0; k < count; k++) {
      const random = mulberry32(seed + k);
      const gauss = () => {
        let sum = 0;
        for (let i = 0; i < 12; i++) sum += random();
        return sum - 6;
      };
      const values = Array.from({ length }, () => 100 + 5 * gauss());
      const s = series(values, hidden);
      trainModel({ ...s, params: {} }).forecasts.forEach((f, i) => {
        const y = s.truth[i] as number;
        const b = f.intervals?.y;
        rows++;
        if (y >= Number(b?.lo80) && y <= Number(b?.hi80)) in80++;
        if (y >= Number(b?.lo95) && y <= Number(b?.hi95)) in95++;
      });
    }
    return { p80: in80 / rows, p95: in95 / rows };
  }

  const withinTargets = (c: { p80: number; p95: number }) => {
    expect(c.p80).toBeGreaterThanOrEqual(0.75);
    expect(c.p80).toBeLessThanOrEqual(0.85);
    expect(c.p95).toBeGreaterThanOrEqual(0.9);
    expect(c.p95).toBeLessThanOrEqual(0.99);
  };

  // The targets: 80% in [0.75, 0.85], 95% in [0.90, 0.99]. The short series (one backtest window) held 0.73
  // and 0.73 while both widths were the largest of 5 pooled errors; with the Student-t width of small pools
  // they hold 0.94 and 0.996 of 40 i.i.d. series (docs/benchmarks.md, intervals): the 95% is near its level,
  // the 80% too wide on noise this calm (real series need it: the corpus mean went 0.68 -> 0.75). Pinned:
  // this fails the day both are met (then drop `.fails`). The long horizon met them once its widths were an
  // isotonic fit (0.89 / 0.97 before; docs/benchmarks.md, intervals).
  // Both tests below read the same 40 trainings: run them once.
  let shortCoverage: { p80: number; p95: number } | undefined;
  const short = () => (shortCoverage ??= coverage(40, 48, 12, 100));
  it.fails('short series (4 years of months, the last 12 hidden): within the targets (not yet: the 80% band is too wide)', () => {
    withinTargets(short());
  }, 120_000);

  it('short series: the 95% band holds at least 90% of the hidden rows and the 80% at least 75%', () => {
    const c = short();
    expect(c.p95).toBeGreaterThanOrEqual(0.9);
    expect(c.p80).toBeGreaterThanOrEqual(0.75);
  }, 120_000);

  it('windows whose errors share a bias: a new window is covered near the nominal levels', () => {
    // Three windows of 12 steps, each error a window-wide bias N(0, 1) plus noise N(0, 0.5): 15 pooled
    // errors are 3 independent draws of the bias, and their largest (the conformal 95%) is too narrow for a
    // new window's errors (0.90 at 95%). With the Student-t on the effective number of errors: 0.91 and 0.99.
    const random = mulberry32(11);
    const gauss = () => {
      let sum = 0;
      for (let i = 0; i < 12; i++) sum += random();
      return sum - 6;
    };
    const window = () => {
      const bias = gauss();
      return Array.from({ length: 12 }, () => bias + 0.5 * gauss());
    };
    let in80 = 0;
    let in95 = 0;
    const trials = 2000;
    for (let t = 0; t < trials; t++) {
      const windows = [window(), window(), window()];
      const widths = intervalWidths(table(Array.from({ length: 12 }, (_, h) => windows.map((w) => w[h] as number))));
      const fresh = Math.abs(window()[5] as number);
      if (fresh <= (widths.q80[5] as number)) in80++;
      if (fresh <= (widths.q95[5] as number)) in95++;
    }
    expect(in95 / trials).toBeGreaterThanOrEqual(0.93);
    expect(in95 / trials).toBeLessThanOrEqual(0.99);
    expect(in80 / trials).toBeGreaterThanOrEqual(0.8);
    expect(in80 / trials).toBeLessThanOrEqual(0.95);
  });

  it('long horizon (50 years of months, the last 200 hidden): within the targets', () => {
    withinTargets(coverage(2, 600, 200, 200));
  }, 120_000);

  it('long horizon: the 95% interval holds at least 90% and the 80% at least 75% of an i.i.d. series', () => {
    const c = coverage(2, 600, 200, 200);
    expect(c.p80).toBeGreaterThanOrEqual(0.75);
    expect(c.p95).toBeGreaterThanOrEqual(0.9);
    expect(c.p95).toBeLessThanOrEqual(0.99);
  }, 120_000);
});

describe('forecasting engine: reproducible, explained, with intervals', () => {
  const random = mulberry32(21);
  const values = Array.from({ length: 96 }, (_, i) => 50 + 0.5 * i + (SEASON[i % 12] as number) + (random() - 0.5) * 6);
  const s = series(values, 12);
  const progress: TrainingProgress[] = [];
  const result = trainModel({ ...s, params: {} }, { onProgress: (p) => progress.push(p), progressIntervalMs: 0 });

  it('gives the same forecast for the same upload without a seed', () => {
    const again = trainModel({ ...s, params: {} });
    expect(again.forecasts).toEqual(result.forecasts);
    expect(again.model).toEqual(result.model);
  });

  it("seeds each family's fits by what they are, not by the families that ran before them", () => {
    // Each fit's seed once came from the work done before it: taking a family out of the registry re-seeded
    // the network and changed its backtest score, so no family could be judged on its own.
    const registry = familiesFor('numeric');
    const all = [...registry];
    const networkScore = (r: TrainingResult) => r.selection?.outputs[0]?.candidates.find((c) => c.name === 'network');
    try {
      registry.splice(registry.findIndex((f) => f.name === 'sarima'), 1);
      const without = trainModel({ ...s, params: {} });
      expect(without.selection?.outputs[0]?.candidates.some((c) => c.name === 'sarima')).toBe(false);
      expect(networkScore(without)?.error).toBeGreaterThan(0);
      expect(networkScore(without)).toEqual(networkScore(result));
    } finally {
      registry.splice(0, registry.length, ...all);
    }
  });

  it('stores a model that predicts the same forecasts and intervals after a JSON round trip', () => {
    const stored = JSON.parse(JSON.stringify(result.model)) as typeof result.model;
    const rows = s.rows.slice(-12);
    expect(predict(stored, s.header, rows)).toEqual(result.forecasts.map((f) => f.values));
    expect(predictWithIntervals(stored, s.header, rows).map((r) => r.intervals)).toEqual(result.forecasts.map((f) => f.intervals));
  });

  it('gives 80/95% intervals around every numeric forecast that widen with the horizon', () => {
    const widths = result.forecasts.map((f) => {
      const v = Number(f.values.y);
      const i = f.intervals?.y;
      expect(i).toBeDefined();
      const [lo95, lo80, hi80, hi95] = [i?.lo95, i?.lo80, i?.hi80, i?.hi95].map(Number) as [number, number, number, number];
      expect(lo95).toBeLessThanOrEqual(lo80);
      expect(lo80).toBeLessThanOrEqual(v);
      expect(v).toBeLessThanOrEqual(hi80);
      expect(hi80).toBeLessThanOrEqual(hi95);
      expect(hi95 - lo95).toBeGreaterThan(0);
      return hi95 - lo95;
    });
    for (let i = 1; i < widths.length; i++) expect(widths[i]).toBeGreaterThanOrEqual((widths[i - 1] as number) - 0.002);
  });

  it('keeps long-horizon intervals near their nominal coverage when the error does not grow with the step', () => {
    // Three backtest windows of 300 steps whose errors are uniform on (-1, 1) at every step: the true
    // 80% and 95% half-widths are 0.8 and 0.95 however far ahead.
    const random = mulberry32(7);
    const draw = () => 2 * random() - 1;
    const widths = intervalWidths(table(Array.from({ length: 300 }, () => [draw(), draw(), draw()])));
    const fresh = Array.from({ length: 20000 }, draw);
    const coverage = (w: number) => fresh.filter((e) => Math.abs(e) <= w).length / fresh.length;
    for (const step of [1, 150, 300]) {
      expect(coverage(widths.q80[step - 1] as number)).toBeGreaterThanOrEqual(0.8);
      expect(coverage(widths.q80[step - 1] as number)).toBeLessThan(0.92);
      expect(coverage(widths.q95[step - 1] as number)).toBeGreaterThanOrEqual(0.95);
      expect(coverage(widths.q95[step - 1] as number)).toBeLessThan(0.995);
    }
  });

  it('slides the pooled errors along the horizon to the same widths as pooling every step anew', () => {
    // Each step from scratch: the errors of steps h-r..h+r, r = max(2, 5% of the horizon), and its
    // conformal quantile; then the running maximum, or from 50 steps on the isotonic fit by its min-max
    // formula (the largest over j <= i of the smallest over k >= i of the mean of steps j..k).
    const isotonic = (ys: number[]) =>
      ys.map((_, i) => {
        let best = -Infinity;
        for (let j = 0; j <= i; j++) {
          let least = Infinity;
          let sum = ys.slice(j, i).reduce((a, b) => a + b, 0);
          for (let k = i; k < ys.length; k++) {
            sum += ys[k] as number;
            least = Math.min(least, sum / (k - j + 1));
          }
          best = Math.max(best, least);
        }
        return best;
      });
    const anew = (errorsByStep: number[][]) => {
      const byStep = table(errorsByStep);
      const radius = Math.max(2, Math.round(errorsByStep.length * 0.05));
      const quantile = (errors: number[], q: number) => {
        const sorted = errors.map(Math.abs).sort((a, b) => a - b);
        return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length, Math.ceil((sorted.length + 1) * q)) - 1] as number);
      };
      const q80: number[] = [];
      const q95: number[] = [];
      const long = radius > 2;
      errorsByStep.forEach((_, h) => {
        const pool = errorsByStep.slice(Math.max(0, h - radius), h + radius + 1).flat();
        // Pools under 19 errors also take the Student-t width (its own test below); the slide is what is checked here.
        const small = pool.length < 19 ? smallPoolWidths(byStep, h - radius, h + radius) : { w80: 0, w95: 0 };
        const [w80, w95] = [Math.max(quantile(pool, 0.8), small.w80), Math.max(quantile(pool, 0.95), small.w95)];
        q80.push(long ? w80 : Math.max(w80, q80.at(-1) ?? 0));
        q95.push(long ? w95 : Math.max(w95, q95.at(-1) ?? 0, q80.at(-1) as number));
      });
      if (!long) return { q80, q95 };
      const i80 = isotonic(q80);
      return { q80: i80, q95: isotonic(q95).map((w, h) => Math.max(w, i80[h] as number)) };
    };
    const random = mulberry32(3);
    for (let k = 0; k < 200; k++) {
      const steps = 1 + Math.floor(random() * 300);
      // Repeated values, zeros and steps without errors, as short windows and exact fits give.
      const errors = Array.from({ length: steps }, () => Array.from({ length: Math.floor(random() * 4) }, () => Math.round((random() - 0.5) * 10)));
      const [got, want] = [intervalWidths(table(errors)), anew(errors)];
      for (const key of ['q80', 'q95'] as const) {
        expect(got[key]).toHaveLength(want[key].length);
        got[key].forEach((w, h) => expect(w).toBeCloseTo(want[key][h] as number, 9));
      }
    }
  });

  it('explains the choice: every candidate with its backtest error, the baseline, horizon and frequency', () => {
    const sel = result.selection;
    expect(sel).toMatchObject({ modelFamily: 'auto', scheme: 'rolling-origin', horizon: 12, frequency: 'monthly', season: 12 });
    const out = sel?.outputs[0];
    const names = out?.candidates.map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['naive', 'seasonal_naive', 'seasonal_drift', 'linear', 'linear_ar']));
    expect(out?.candidates.find((c) => c.name === out?.baseline.name)?.error).toBe(out?.baseline.error);
    expect(result.metrics.baselineMae).toBeGreaterThanOrEqual(result.metrics.mae);
  });

  it("lists each output's interval coverage on the backtest, each window against widths built without it", () => {
    const out = result.selection?.outputs[0];
    const coverage = out?.intervalCoverage;
    expect(coverage).toBeDefined();
    // 96 months, horizon 12: three windows of 12, each checked against widths from the two others.
    expect(coverage?.rows).toBe(36);
    expect(coverage?.p80).toBeGreaterThan(0.5);
    expect(coverage?.p95).toBeGreaterThanOrEqual(coverage?.p80 as number);
    expect(coverage?.p95).toBeLessThanOrEqual(1);
    const pct = (x: number) => `${Math.round(x * 100)}%`;
    expect(explainSelection(result.selection)).toContain(
      `intervals on the backtest: 80% band held ${pct(coverage?.p80 as number)}, 95% band held ${pct(coverage?.p95 as number)} of ${coverage?.rows} rows`,
    );
  });

  it('reports progress rising monotonically to 100', () => {
    expect(progress[0]?.advance).toBe(0);
    expect(progress.at(-1)?.advance).toBe(100);
    for (let i = 1; i < progress.length; i++) expect(progress[i]?.advance).toBeGreaterThanOrEqual(progress[i - 1]?.advance as number);
    expect(progress.length).toBeGreaterThan(5);
  });

  it('keeps the legacy network-only path behind ModelFamily network', () => {
    const legacy = trainModel({ ...s, params: { modelFamily: 'network', epochs: 20 } });
    expect(legacy.model.version).toBe(1);
    expect(legacy.selection).toBeUndefined();
    expect(result.model.version).toBe(2);
  });
});
