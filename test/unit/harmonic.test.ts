import { describe, expect, it } from 'vitest';
import { candidateTerms, errorPath, fitHarmonic, harmonicFamily, type HarmonicState } from '../../src/training/models/harmonic.js';
import { fitArma } from '../../src/training/stats/arma.js';
import type { FitContext, FitRows } from '../../src/training/models/model.js';
import { noise, seasonContext } from './family-support.js';


const periodsContext = (periods: number[], horizon: number): FitContext => {
  const base = seasonContext(periods[0]!, horizon);
  return { ...base, info: { ...base.info, periods } };
};

const rowsFrom = (y: number[], features: number[][] = y.map(() => [])): FitRows => ({ time: y.map((_, i) => i), features, target: y });

/** Amplitude and phase of a sin(angle + phase) from the sin and cos coefficients of one term. */
function harmonicOf(state: HarmonicState, period: number, k: number): { amplitude: number; phase: number } {
  const i = state.terms.findIndex((t) => t.period === period && t.k === k);
  expect(i).toBeGreaterThanOrEqual(0);
  const [s, c] = [state.fourier[2 * i]!, state.fourier[2 * i + 1]!];
  return { amplitude: Math.hypot(s, c), phase: Math.atan2(c, s) };
}

describe('dynamic harmonic regression: known harmonics', () => {
  // Hourly, eight weeks: a daily cycle of two harmonics, a weekly one of one, white noise (sd 0.5).
  const gauss = noise(1);
  const n = 24 * 7 * 8;
  const signal = (t: number) =>
    20 + 3 * Math.sin((2 * Math.PI * t) / 24 + 0.5) + 1.2 * Math.sin((2 * Math.PI * 2 * t) / 24 + Math.PI / 2) + 2 * Math.sin((2 * Math.PI * t) / 168 - 1);
  const y = Array.from({ length: n }, (_, t) => signal(t) + 0.5 * gauss());

  it('chooses the true K by AICc (2 of the day, 1 of the week) and recovers amplitudes and phases', () => {
    const state = fitHarmonic(rowsFrom(y), [24, 168]);
    expect(state.periods).toEqual([
      { period: 24, harmonics: 2 },
      { period: 168, harmonics: 1 },
    ]);
    const day1 = harmonicOf(state, 24, 1);
    const day2 = harmonicOf(state, 24, 2);
    const week = harmonicOf(state, 168, 1);
    expect(day1.amplitude).toBeCloseTo(3, 1);
    expect(day1.phase).toBeCloseTo(0.5, 1);
    expect(day2.amplitude).toBeCloseTo(1.2, 1);
    expect(day2.phase).toBeCloseTo(Math.PI / 2, 1);
    expect(week.amplitude).toBeCloseTo(2, 1);
    expect(week.phase).toBeCloseTo(-1, 1);
    expect(state.intercept).toBeCloseTo(20, 1);
    // White noise: no error model worth its parameters.
    expect(state.ar.length + state.ma.length).toBeLessThanOrEqual(1);
  });

  it('forecasts the next week within 0.1 MAE of the signal and describes itself', () => {
    const fitted = harmonicFamily.fit(rowsFrom(y), periodsContext([24, 168], 168));
    const time = Array.from({ length: 168 }, (_, i) => n + i);
    const forecast = fitted.predict({ time, features: time.map(() => []) }) as number[];
    const mae = forecast.reduce((s, v, i) => s + Math.abs(v - signal(time[i]!)), 0) / 168;
    expect(mae).toBeLessThan(0.1);
    expect(fitted.describe()).toMatch(/^dynamic harmonic regression \(trend, Fourier terms K=2 of 24, K=1 of 168\) with ARIMA\(\d,0,\d\) errors/);
  });

  it('leaves out a harmonic an earlier period has (k = 7 of 168 is 1 of 24) and those at or above p/2', () => {
    const [day, week] = candidateTerms([24, 168]);
    expect(day!.map((t) => t.k)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(week!.some((t) => t.k % 7 === 0 && t.k / 7 <= 11)).toBe(false);
    expect(candidateTerms([4])[0]!.map((t) => t.k)).toEqual([1]);
  });

  it('recovers a covariate coefficient next to the harmonics', () => {
    const g = noise(2);
    const x = Array.from({ length: n }, () => g());
    const withInput = y.map((v, t) => v + 1.5 * x[t]!);
    const state = fitHarmonic(rowsFrom(withInput, x.map((v) => [v])), [24, 168]);
    expect(state.features[0]).toBeCloseTo(1.5, 1);
  });
});

describe('dynamic harmonic regression: ARIMA errors', () => {
  it('finds AR(1) errors (phi 0.7) and forecasts an error that decays to zero', () => {
    const gauss = noise(3);
    let e = 0;
    const n = 24 * 7 * 8;
    const y = Array.from({ length: n }, (_, t) => {
      e = 0.7 * e + 0.5 * gauss();
      return 10 + 2 * Math.sin((2 * Math.PI * t) / 24) + e;
    });
    const state = fitHarmonic(rowsFrom(y), [24, 168]);
    expect(state.d).toBe(0);
    expect(state.ar[0]).toBeGreaterThan(0.55);
    expect(state.ar[0]).toBeLessThan(0.85);
    const path = errorPath(state, 300);
    expect(Math.abs(path[0]!)).toBeGreaterThan(0);
    expect(Math.abs(path[299]!)).toBeLessThan(1e-6);
  });

  it('fits an AR(2) by Hannan-Rissanen close to the truth', () => {
    const gauss = noise(4);
    const e = new Float64Array(5000);
    for (let t = 2; t < e.length; t++) e[t] = 0.5 * e[t - 1]! + 0.3 * e[t - 2]! + gauss();
    const arma = fitArma(e);
    expect(arma.ar.length).toBeGreaterThanOrEqual(2);
    expect(arma.ar[0]).toBeCloseTo(0.5, 1);
    expect(arma.ar[1]).toBeCloseTo(0.3, 1);
  });

  it('integrates wandering errors (KPSS): the forecast carries the last level on instead of returning to the mean', () => {
    const gauss = noise(5);
    let level = 0;
    const n = 24 * 7 * 6;
    const y = Array.from({ length: n }, (_, t) => {
      level += 0.3 * gauss();
      return 50 + level + 2 * Math.sin((2 * Math.PI * t) / 24);
    });
    const state = fitHarmonic(rowsFrom(y), [24, 168]);
    expect(state.d).toBe(1);
    const fitted = harmonicFamily.revive(state);
    const time = Array.from({ length: 24 }, (_, i) => n + 24 * 6 + i);
    const forecast = fitted.predict({ time, features: time.map(() => []) }) as number[];
    const lastDay = y.slice(-24).reduce((a, b) => a + b, 0) / 24;
    const mean = forecast.reduce((a, b) => a + b, 0) / 24;
    expect(Math.abs(mean - lastDay)).toBeLessThan(1.5);
  });
});

describe('harmonic family: the family contract', () => {
  const gauss = noise(6);
  const n = 24 * 7 * 5;
  const y = Array.from({ length: n }, (_, t) => 100 + 0.02 * t + 5 * Math.sin((2 * Math.PI * t) / 24) + 3 * Math.cos((2 * Math.PI * t) / 168) + gauss());
  const ctx = periodsContext([24, 168], 168);

  it('predicts identically after a JSON round trip, fits deterministically, and reports progress up to 1', () => {
    const shares: number[] = [];
    const fitted = harmonicFamily.fit(rowsFrom(y), { ...ctx, progress: (s) => shares.push(s) });
    const revived = harmonicFamily.revive(JSON.parse(JSON.stringify(fitted.state)));
    const time = Array.from({ length: 400 }, (_, i) => n - 100 + i);
    const rows = { time, features: time.map(() => []) };
    expect(revived.predict(rows)).toEqual(fitted.predict(rows));
    expect(harmonicFamily.fit(rowsFrom(y), ctx).state).toEqual(fitted.state);
    expect(shares.length).toBeGreaterThanOrEqual(3);
    shares.forEach((s, i) => expect(s).toBeGreaterThanOrEqual(i > 0 ? shares[i - 1]! : 0));
    expect(shares[shares.length - 1]).toBe(1);
    expect(JSON.stringify(fitted.state).length).toBeLessThan(60_000);
  });

  it('gives in-sample values for rows before the fit end, close to the data', () => {
    const fitted = harmonicFamily.fit(rowsFrom(y), ctx);
    const time = Array.from({ length: 300 }, (_, i) => i * 2);
    const inSample = fitted.predict({ time, features: time.map(() => []) }) as number[];
    const mae = inSample.reduce((s, v, i) => s + Math.abs(v - y[time[i]!]!), 0) / time.length;
    expect(mae).toBeLessThan(1.2);
  });

  it('applies to time-ordered rows with a season', () => {
    expect(harmonicFamily.applies(ctx.info, 100)).toBe(true);
    expect(harmonicFamily.applies({ ...ctx.info, periods: [] }, 1000)).toBe(false);
    expect(harmonicFamily.applies({ ...ctx.info, timeOrdered: false }, 1000)).toBe(false);
  });

  it('handles the hourly year (8,766 steps) next to the day: two years of hours, the yearly swing forecast', () => {
    const g = noise(7);
    const length = 2 * 8766 + 500;
    const hourly = (t: number) => 10 + 8 * Math.sin((2 * Math.PI * t) / 8766) + 4 * Math.sin((2 * Math.PI * t) / 24);
    const series = Array.from({ length }, (_, t) => hourly(t) + g());
    const fitted = harmonicFamily.fit(rowsFrom(series), periodsContext([24, 8766], 24));
    expect(fitted.state.periods.map((p) => p.harmonics > 0)).toEqual([true, true]);
    const time = Array.from({ length: 24 * 30 }, (_, i) => length + i * 3);
    const forecast = fitted.predict({ time, features: time.map(() => []) }) as number[];
    const mae = forecast.reduce((s, v, i) => s + Math.abs(v - hourly(time[i]!)), 0) / time.length;
    expect(mae).toBeLessThan(0.5);
  });
});
