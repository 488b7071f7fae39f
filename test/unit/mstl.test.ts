import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { initSync, MSTL } from '@bsull/augurs/mstl';
import { describe, expect, it } from 'vitest';
import type { FitContext } from '../../src/training/models/model.js';
import { fitMstl, mstlDecompose, mstlFamily, mstlForecast, periodsFor } from '../../src/training/models/mstl.js';
import { stl } from '../../src/training/models/stl.js';
import { mulberry32 } from '../../src/training/core/prng.js';
import { rowsOf, seasonContext } from './family-support.js';

/** A time-ordered fit context with several periods (hourly data: a day and a week). */
const periodsContext = (periods: number[], horizon: number): FitContext => {
  const base = seasonContext(periods[0]!, horizon);
  return { ...base, info: { ...base.info, periods } };
};

describe('STL: the numbers of statsmodels 0.13.5 (the authors Fortran)', () => {
  // A season of 24 (a sine plus a 6-step block), a trend and two incommensurate wiggles: no noise generator,
  // so Python computes the same series (statsmodels.tsa.seasonal.STL, inner_iter=2, outer_iter=0).
  const series = Array.from({ length: 240 }, (_, i) => 10 + 0.05 * i + 3 * Math.sin((2 * Math.PI * i) / 24) + (i % 24 < 6 ? 2 : 0) + 0.5 * Math.sin(i * 1.7) + 0.3 * Math.cos(i * 0.37));
  const at = [0, 1, 23, 60, 119, 120, 200, 238, 239];

  it("agrees to 1e-8 with R's defaults for s.window 11 (seasonal degree 0, loess every few points and interpolated)", () => {
    const fit = stl(series, { period: 24, seasonal: 11 });
    const seasonal = [1.4898256093, 2.3070628773, -1.2351559588, -0.469467603, -1.2785761839, 1.4977427608, 2.0862870983, -1.9341135772, -1.2732296971];
    const trend = [10.5808611806, 10.6255912208, 11.6600466141, 13.5231947041, 16.433657185, 16.4802288914, 20.4959161417, 22.4549721928, 22.5088181784];
    at.forEach((i, j) => {
      expect(fit.seasonal[i]).toBeCloseTo(seasonal[j]!, 8);
      expect(fit.trend[i]).toBeCloseTo(trend[j]!, 8);
      expect(fit.seasonal[i]! + fit.trend[i]! + fit.remainder[i]!).toBeCloseTo(series[i]!, 10);
    });
  });

  it('agrees to 1e-8 with a locally linear seasonal smoother evaluated at every point (statsmodels defaults, seasonal 7)', () => {
    const fit = stl(series, { period: 24, seasonal: 7, seasonalDegree: 1, seasonalJump: 1, trendJump: 1, lowPassJump: 1 });
    const seasonal = [1.58164486, 2.5187875811, -1.1920594982, -0.4684906827, -1.3070876431, 1.4805132115, 2.068676732, -1.8036842058, -1.3533851037];
    const trend = [10.5629249361, 10.6089035345, 11.6585525648, 13.5151595946, 16.4353778731, 16.4866309025, 20.5008205808, 22.4609003448, 22.5149882015];
    at.forEach((i, j) => {
      expect(fit.seasonal[i]).toBeCloseTo(seasonal[j]!, 8);
      expect(fit.trend[i]).toBeCloseTo(trend[j]!, 8);
    });
  });

  it('refuses a series shorter than two periods', () => {
    expect(() => stl(series.slice(0, 47), { period: 24, seasonal: 11 })).toThrow(/two periods/);
  });
});

describe('MSTL family: two known seasons', () => {
  // Hourly: a day (a sine and an 8-hour block) and a week (a sine and a two-day block) on a slow trend, small noise.
  const daily = (t: number) => 3 * Math.sin((2 * Math.PI * t) / 24) + (t % 24 < 8 ? 1.5 : -0.75);
  const weekly = (t: number) => 2 * Math.sin((2 * Math.PI * t) / 168) + (t % 168 < 48 ? 2 : -0.8);
  const random = mulberry32(3);
  const n = 168 * 10;
  const h = 168;
  const truth = Array.from({ length: n + h }, (_, t) => 50 + 0.01 * t + daily(t) + weekly(t) + 0.3 * (random() - 0.5));
  const known = truth.slice(0, n);
  const centred = (f: (t: number) => number, p: number) => {
    let sum = 0;
    for (let t = 0; t < p; t++) sum += f(t);
    return (t: number) => f(t) - sum / p;
  };

  it('recovers each season within 0.15 away from the ends (the true ones sum to 0 over their cycle)', () => {
    const { seasonals } = mstlDecompose(known, [24, 168]);
    const [day, week] = [centred(daily, 24), centred(weekly, 168)];
    for (let t = 168; t < n - 168; t++) {
      expect(Math.abs(seasonals[0]![t]! - day(t))).toBeLessThan(0.15);
      expect(Math.abs(seasonals[1]![t]! - week(t))).toBeLessThan(0.15);
    }
  });

  it('forecasts the week ahead within 0.1 MAE of the truth (the seasonal naive of a week: 1.67), as augurs MSTL.ets does', () => {
    const state = fitMstl(known, 0, [24, 168]);
    const ours = Array.from({ length: h }, (_, i) => mstlForecast(state, i + 1));
    const mae = (f: number[]) => f.reduce((s, v, i) => s + Math.abs(v - truth[n + i]!), 0) / h;
    const weekAgo = Array.from({ length: h }, (_, i) => known[n - 168 + i]!);
    expect(mae(ours)).toBeLessThan(0.1);
    expect(mae(weekAgo)).toBeGreaterThan(1.5);
    // The reference: @bsull/augurs 0.10.2 (Rust MSTL + its own AutoETS), which keeps no state we could store.
    const wasm = path.join(path.dirname(createRequire(import.meta.url).resolve('@bsull/augurs')), 'mstl_bg.wasm');
    initSync({ module: readFileSync(wasm) });
    const reference = MSTL.ets([24, 168]);
    reference.fit(known);
    const theirs = reference.predict(h).point;
    ours.forEach((v, i) => expect(Math.abs(v - theirs[i]!)).toBeLessThan(0.01));
  });

  it('stores a small state that predicts identically after a JSON round trip, and fits deterministically', () => {
    const ctx = periodsContext([24, 168], h);
    const fitted = mstlFamily.fit(rowsOf(known), ctx);
    const revived = mstlFamily.revive(JSON.parse(JSON.stringify(fitted.state)));
    const rows = { time: Array.from({ length: h + 48 }, (_, i) => n - 48 + i), features: Array.from({ length: h + 48 }, () => []) };
    expect(revived.predict(rows)).toEqual(fitted.predict(rows));
    expect(mstlFamily.fit(rowsOf(known), ctx).state).toEqual(fitted.state);
    // The last cycle of each season, the ETS states and at most 2,000 in-sample values.
    expect(JSON.stringify(fitted.state).length).toBeLessThan(60_000);
    expect(fitted.describe()).toMatch(/^MSTL \(seasons 24, 168\), seasonally adjusted series by ETS/);
  });

  it('gives in-sample values for rows before the fit end: the seasons plus the one-step trend, close to the data', () => {
    const fitted = mstlFamily.fit(rowsOf(known), periodsContext([24, 168], h));
    const time = Array.from({ length: 336 }, (_, i) => n - 336 + i);
    const inSample = fitted.predict({ time, features: time.map(() => []) }) as number[];
    const mae = inSample.reduce((s, v, i) => s + Math.abs(v - known[time[i]!]!), 0) / time.length;
    expect(mae).toBeLessThan(0.3);
  });

  it('reports progress up to 1, and uses only the periods with two full cycles in the rows', () => {
    const shares: number[] = [];
    mstlFamily.fit(rowsOf(known), { ...periodsContext([24, 168], h), progress: (s) => shares.push(s) });
    expect(shares.length).toBeGreaterThan(3);
    shares.forEach((s, i) => expect(s).toBeGreaterThanOrEqual(i > 0 ? shares[i - 1]! : 0));
    expect(shares[shares.length - 1]).toBe(1);
    expect(periodsFor([24, 168, 8766], 400)).toEqual([24, 168]);
    expect(periodsFor([7, 365.25], 800)).toEqual([7, 365]);
  });

  it('applies to time-ordered rows with a season from two cycles of the shortest period, and then decomposes only that one', () => {
    const info = periodsContext([24, 168], h).info;
    expect(mstlFamily.applies(info, 48)).toBe(true);
    expect(mstlFamily.applies(info, 47)).toBe(false);
    expect(mstlFamily.applies({ ...info, periods: [] }, 1000)).toBe(false);
    expect(mstlFamily.applies({ ...info, timeOrdered: false }, 1000)).toBe(false);
    const dayOnly = mstlFamily.fit(rowsOf(known.slice(0, 200)), periodsContext([24, 168], h));
    expect(dayOnly.state.periods).toEqual([24]);
    expect(dayOnly.describe()).toMatch(/^MSTL \(seasons 24\)/);
  });

  it('fits rows with missing steps (interpolated on the grid) and forecasts on their time axis', () => {
    const time = known.map((_, i) => i).filter((i) => i % 50 !== 7);
    const rows = { time, features: time.map(() => []), target: time.map((t) => known[t]!) };
    const fitted = mstlFamily.fit(rows, periodsContext([24, 168], h));
    const ahead = Array.from({ length: h }, (_, i) => n + i);
    const forecast = fitted.predict({ time: ahead, features: ahead.map(() => []) }) as number[];
    const mae = forecast.reduce((s, v, i) => s + Math.abs(v - truth[n + i]!), 0) / h;
    expect(mae).toBeLessThan(0.2);
  });
});
