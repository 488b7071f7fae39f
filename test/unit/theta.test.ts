import { describe, expect, it } from 'vitest';
import { rowsOf, seasonContext } from './family-support.js';
import { fitTheta, thetaFamily, thetaForecast } from '../../src/training/models/theta.js';
import { isSeasonal } from '../../src/training/stats/stationarity.js';
import { mulberry32 } from '../../src/training/core/prng.js';

const random = mulberry32(5);
const gauss = () => {
  let s = 0;
  for (let i = 0; i < 12; i++) s += random();
  return s - 6;
};
// A level with noise (120 points, drawn first so the seasonal series below is statsmodels' test series too).
const level = Array.from({ length: 120 }, () => 10 + gauss());
for (let i = 0; i < 100; i++) gauss();
const SEASON = [5, -3, 2, -4];
const seasonal = Array.from({ length: 80 }, (_, i) => 50 + 0.5 * i + (SEASON[i % 4] as number) + 0.5 * gauss());

describe('Theta family: the answers statsmodels ThetaModel gives', () => {
  it('deseasonalises a quarterly season multiplicatively and forecasts as statsmodels does (96.803, 86.545, 93.234, 85.621)', () => {
    expect(isSeasonal(seasonal, 4)).toBe(true);
    const state = fitTheta(seasonal, 0, 4);
    expect(state.decomposition).toBe('multiplicative');
    expect(state.b0).toBeCloseTo(0.498749, 5);
    [96.803, 86.545, 93.234, 85.621].forEach((v, i) => expect(thetaForecast(state, i + 1)).toBeCloseTo(v, 2));
  });

  it('finds no season in a level with noise and forecasts within 0.1 of statsmodels (10.201, 10.203)', () => {
    // statsmodels estimates alpha as the MLE of the equivalent IMA(1,1) (0.10); ours by least squares (~0).
    expect(isSeasonal(level, 4)).toBe(false);
    const state = fitTheta(level, 0, 4);
    expect(state.decomposition).toBe('none');
    expect(state.b0).toBeCloseTo(0.003552, 5);
    [10.201, 10.203].forEach((v, i) => expect(Math.abs(thetaForecast(state, i + 1) - v)).toBeLessThan(0.1));
  });

  it('is deterministic and predicts the same after a JSON round trip', () => {
    const rows = rowsOf(seasonal);
    const ctx = seasonContext(4);
    const future = { time: [80, 81, 85, 90], features: [[], [], [], []] };
    const a = thetaFamily.fit(rows, ctx);
    expect(thetaFamily.fit(rows, { ...ctx, seed: 7 }).state).toEqual(a.state);
    const revived = thetaFamily.revive(JSON.parse(JSON.stringify(a.state)) as typeof a.state);
    expect(revived.predict(future)).toEqual(a.predict(future));
  });
});
