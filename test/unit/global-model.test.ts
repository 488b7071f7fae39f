import { describe, expect, it } from 'vitest';
import { describeGlobalRun, fairShares, runGlobalRound, type GlobalOptions, type GlobalRound, type GlobalRoundRun, type GlobalSeries } from '../../src/training/models/global.js';
import { meanMase, naive, panels, splitPanel, type Panel } from '../support/global-panels.js';

/** Real panels (vega-datasets), read once. */
const all = panels();
const panel = (id: string) => all.find((p) => p.id === id) as Panel;

/** The panel's series with their last h values held out, and the one round that predicts them. */
function heldOut(p: Panel) {
  const splits = splitPanel(p);
  const round: GlobalRound = { cut: splits.map((s) => s.train.time[s.train.time.length - 1] as number), predict: splits.map((s) => s.future) };
  return { splits, series: splits.map((s) => s.train), round };
}

/**
 * The product path as panel/panel-part.ts takes it: runGlobalRound per round (its progress a share of the
 * rounds), null when any round could not learn, the description of the rounds trained.
 */
function runRounds(series: GlobalSeries[], rounds: GlobalRound[], options: GlobalOptions) {
  const runs: GlobalRoundRun[] = [];
  for (let r = 0; r < rounds.length; r++) {
    const progress = options.progress;
    const run = runGlobalRound(series, rounds[r] as GlobalRound, r, { ...options, progress: progress ? (share) => progress((r + share) / rounds.length) : undefined });
    if (!run) return null;
    runs.push(run);
  }
  return { predictions: runs.map((r) => r.predictions), description: describeGlobalRun(runs.map((r) => r.trained), options.season) };
}

describe('global model across series', () => {
  const employment = panel('us-employment');

  it('gives the same forecasts for the same seed', () => {
    const { series, round } = heldOut(employment);
    const a = runRounds(series, [round], { season: 12, seed: 5 });
    const b = runRounds(series, [round], { season: 12, seed: 5 });
    expect(a).not.toBeNull();
    expect(b?.predictions).toEqual(a?.predictions);
    expect(a?.description).toMatch(/^global boosting over 23 series/);
  });

  it('answers every round in the shape asked, [] for a series without a cut or times', () => {
    const series = employment.series.slice(0, 6).map((s) => ({ time: s.time, values: s.values }));
    const last = (s: GlobalSeries) => s.time[s.time.length - 1] as number;
    const rounds: GlobalRound[] = [
      {
        cut: series.map((s, i) => (i === 2 ? null : last(s) - 24)),
        predict: series.map((s, i) => (i === 2 ? [] : i === 4 ? [] : [last(s) - 23, last(s) - 20, last(s) - 13])),
      },
      { cut: series.map((s) => last(s)), predict: series.map((s) => [last(s) + 1, last(s) + 2]) },
    ];
    let calls = 0;
    let share = 0;
    const run = runRounds(series, rounds, { season: 12, seed: 1, progress: (done) => ((calls += 1), (share = done)) });
    expect(run).not.toBeNull();
    const predictions = run?.predictions ?? [];
    expect(predictions).toHaveLength(2);
    expect(predictions[0]?.map((p) => p.length)).toEqual([3, 3, 0, 3, 0, 3]);
    expect(predictions[1]?.map((p) => p.length)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(predictions.flat(2).every((v) => Number.isFinite(v))).toBe(true);
    expect(calls).toBeGreaterThan(10);
    expect(share).toBe(1);
  });

  it('is null for one series or too few rows, and never throws on odd input', () => {
    const one = employment.series[0] as GlobalSeries;
    const last = one.time[one.time.length - 1] as number;
    expect(runRounds([one], [{ cut: [last], predict: [[last + 1]] }], { season: 12, seed: 1 })).toBeNull();
    const tiny = employment.series.slice(0, 3).map((s) => ({ time: s.time.slice(0, 10), values: s.values.slice(0, 10) }));
    const cut = tiny.map((s) => s.time[9] as number);
    expect(runRounds(tiny, [{ cut, predict: cut.map((c) => [c + 1]) }], { season: 12, seed: 1 })).toBeNull();
    // A series with no value at or before its cut cannot be scaled: NaN, the others still forecast.
    const series = employment.series.slice(0, 4).map((s) => ({ time: s.time, values: s.values }));
    const empty: GlobalSeries = { time: [], values: [] };
    const end = series.map((s) => s.time[s.time.length - 1] as number);
    const run = runRounds([...series, empty], [{ cut: [...end, 0], predict: [...end.map((e) => [e + 1]), [1, 2]] }], { season: 12, seed: 1 });
    expect(run?.predictions[0]?.[4]).toEqual([NaN, NaN]);
    expect(run?.predictions[0]?.slice(0, 4).flat().every((v) => Number.isFinite(v))).toBe(true);
  });

  it('trains on at most the row cap, a fair share of the most recent rows per series', () => {
    expect(fairShares([5, 100, 100, 1000], 300)).toEqual([5, 98, 98, 99]);
    expect(fairShares([5, 10], 300)).toEqual([5, 10]);
    // Under the cap (100,000 rows) every known row after a series' first trains.
    const jobs = heldOut(panel('jobs'));
    const run = runRounds(jobs.series, [jobs.round], { season: 1, seed: 2 });
    const rows = Number(/\((\d+) rows\)/.exec(run?.description ?? '')?.[1]);
    expect(rows).toBeGreaterThan(1000);
    expect(rows).toBeLessThanOrEqual(jobs.series.reduce((a, s) => a + s.values.length - 1, 0));
    expect(run?.predictions[0]?.flat().every((v) => Number.isFinite(v))).toBe(true);
  });

  it('forecasts series with gaps (annual deaths by disaster type, years missing) within their known range', () => {
    const { splits, series, round } = heldOut(panel('disasters'));
    expect(splits.some((s) => (s.future[s.future.length - 1] as number) - (s.future[0] as number) > s.future.length - 1)).toBe(true);
    const run = runRounds(series, [round], { season: 1, seed: 1 });
    expect(run).not.toBeNull();
    splits.forEach((s, i) => {
      const forecast = run?.predictions[0]?.[i] ?? [];
      expect(forecast).toHaveLength(s.future.length);
      const low = Math.min(...s.train.values);
      const high = Math.max(...s.train.values);
      // The recursion's bound: the known range widened on each side by half of it or the series' scale.
      const scale = s.train.values.slice(-12).reduce((a, v) => a + Math.abs(v), 0) / Math.min(12, s.train.values.length);
      const margin = Math.max((high - low) / 2, scale);
      for (const v of forecast) {
        expect(v).toBeGreaterThanOrEqual(low - margin - 1e-6);
        expect(v).toBeLessThanOrEqual(high + margin + 1e-6);
      }
    });
  });

  it('continues a seasonal pattern two seasons past the cut from its own forecasts', () => {
    // Each industry's average month-of-year profile (real unemployment counts), repeated for 8 years at its own level.
    const unemployment = panel('unemployment');
    const series: GlobalSeries[] = unemployment.series.slice(0, 8).map((s, k) => {
      const profile = Array.from({ length: 12 }, (_, m) => {
        const months = s.values.filter((_, i) => ((s.time[i] as number) % 12) === m);
        return months.reduce((a, b) => a + b, 0) / months.length;
      });
      const time = Array.from({ length: 96 }, (_, i) => 24_000 + i);
      return { time, values: time.map((t) => (profile[t % 12] as number) * (1 + k)) };
    });
    const cut = 24_000 + 71;
    const future = Array.from({ length: 24 }, (_, j) => cut + 1 + j);
    const run = runRounds(series.map((s) => ({ time: s.time.slice(0, 72), values: s.values.slice(0, 72) })), [{ cut: series.map(() => cut), predict: series.map(() => future) }], { season: 12, seed: 3 });
    expect(run).not.toBeNull();
    series.forEach((s, i) => {
      const truth = s.values.slice(72);
      const forecast = run?.predictions[0]?.[i] ?? [];
      const mean = truth.reduce((a, b) => a + b, 0) / truth.length;
      const error = truth.reduce((a, v, j) => a + Math.abs(v - (forecast[j] as number)), 0) / truth.length;
      const naiveError = truth.reduce((a, v) => a + Math.abs(v - (s.values[71] as number)), 0) / truth.length;
      // Within 5% of the level on both seasons ahead, far below the last value carried forward.
      expect(error / mean).toBeLessThan(0.05);
      expect(error).toBeLessThan(naiveError / 3);
    });
  });

  it('beats the naive on a real panel (US employment by sector, last 12 months)', () => {
    const { splits, series, round } = heldOut(employment);
    const run = runRounds(series, [round], { season: 12, seed: 1 });
    const global = meanMase(splits, 12, run?.predictions[0] ?? []);
    const last = meanMase(splits, 12, splits.map(naive));
    expect(global).toBeLessThan(0.8 * last);
  });
});
