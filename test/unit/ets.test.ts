import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeEts, etsFamily, etsForecast, fitEts, formsFor } from '../../src/training/models/ets.js';
import { thetaFamily } from '../../src/training/models/theta.js';
import { noise, rowsOf, seasonContext, terminateWhileFitting } from './family-support.js';


/** The three series of the known answers below: statsmodels 0.13 ETSModel, additive errors, lowest AICc. */
function knownSeries() {
  const gauss = noise(5);
  const level = Array.from({ length: 120 }, () => 10 + gauss());
  let l = 0;
  let b = 2;
  const damped: number[] = [];
  for (let i = 0; i < 100; i++) {
    b *= 0.9;
    l += b;
    damped.push(l + 0.3 * gauss());
  }
  const season = [5, -3, 2, -4];
  const seasonal = Array.from({ length: 80 }, (_, i) => 50 + 0.5 * i + (season[i % 4] as number) + 0.5 * gauss());
  return { level, damped, seasonal };
}

const ahead = (state: ReturnType<typeof fitEts>, steps: number[]) => steps.map((h) => etsForecast(state, h));

describe('ETS and Theta on short series', () => {
  it('apply from five rows, where the simplest form has two degrees of freedom left, and forecast the level', () => {
    const info = seasonContext(1).info;
    expect(etsFamily.applies(info, 4)).toBe(false);
    expect(thetaFamily.applies(info, 4)).toBe(false);
    const rows = rowsOf([50.1, 51.2, 52.0, 52.9, 54.1]);
    for (const family of [etsFamily, thetaFamily]) {
      expect(family.applies(info, 5)).toBe(true);
      const forecast = family.fit(rows, seasonContext(1)).predict({ time: [5, 6], features: [[], []] }) as number[];
      for (const v of forecast) expect(v).toBeGreaterThan(50);
      for (const v of forecast) expect(v).toBeLessThan(60);
    }
    // Five rows leave AICc room for simple exponential smoothing only; six for Holt's trend too.
    expect(fitEts([1, 2, 3, 4, 5], 0, 1, formsFor({ season: 1 }, 5)).form.trend).toBe('none');
    expect(fitEts([1, 2, 3, 4, 5, 6], 0, 1, formsFor({ season: 1 }, 6)).form.trend).toBe('additive');
  });
});

describe('ETS family: the answers statsmodels gives', () => {
  const { level, damped, seasonal } = knownSeries();

  it('fits a level with noise by simple exponential smoothing: the flat forecast statsmodels gives (9.913)', () => {
    const state = fitEts(level, 0, 1, formsFor({ season: 1 }, level.length));
    expect(state.form).toEqual({ trend: 'none', seasonal: false });
    expect(state.alpha).toBeLessThan(0.01);
    for (const v of ahead(state, [1, 5, 20])) expect(v).toBeCloseTo(9.913, 2);
  });

  it('chooses a damped trend on a damped trend: ETS(A,Ad,N), phi 0.90, forecast 18.002 at every step', () => {
    const state = fitEts(damped, 0, 1, formsFor({ season: 1 }, damped.length));
    expect(state.form.trend).toBe('damped');
    expect(state.phi).toBeCloseTo(0.9, 1);
    for (const v of ahead(state, [1, 4, 20])) expect(v).toBeCloseTo(18.002, 1);
    expect(describeEts(state)).toMatch(/^ETS\(A,Ad,N\) damped trend/);
  });

  it('chooses trend and season on a quarterly season: ETS(A,A,A), within 0.3 of statsmodels at every step', () => {
    const state = fitEts(seasonal, 0, 4, formsFor({ season: 4 }, seasonal.length));
    expect(state.form).toEqual({ trend: 'additive', seasonal: true });
    // statsmodels estimates the initial seasonal states too; ours start from the first two seasons.
    const statsmodels = [94.852, 87.421, 92.809, 87.338];
    ahead(state, [1, 2, 3, 4]).forEach((v, i) => expect(Math.abs(v - (statsmodels[i] as number))).toBeLessThan(0.3));
  });

  it('is deterministic and predicts the same after a JSON round trip', () => {
    const rows = rowsOf(seasonal);
    const ctx = seasonContext(4);
    const future = { time: [80, 81, 85, 90], features: [[], [], [], []] };
    const a = etsFamily.fit(rows, ctx);
    const b = etsFamily.fit(rows, { ...ctx, seed: 99 });
    expect(b.state).toEqual(a.state);
    const revived = etsFamily.revive(JSON.parse(JSON.stringify(a.state)) as typeof a.state);
    expect(revived.predict(future)).toEqual(a.predict(future));
  });
});

/** A thread busy fitting the family on 2,000 daily steps ends within a second of terminate(). */
const SERIES_SETUP = `
  const y = Array.from({ length: 2000 }, (_, i) => 100 + Math.sin(i / 3) * 10 + (i % 7));
  const rows = { time: y.map((_, i) => i), features: y.map(() => []), target: y };
  const info = { timeOrdered: true, frequency: 'daily', season: 7, periods: [7], horizon: 100 };
`;

describe('ETS, Theta and AR families in a training thread', () => {
  for (const [file, name] of [
    ['ets', 'etsFamily'],
    ['theta', 'thetaFamily'],
    ['linear', 'arFamily'],
  ] as const) {
    it(`${name} stops within a second when the thread is terminated (abort)`, async () => {
      const elapsed = await terminateWhileFitting(fileURLToPath(new URL(`../../src/training/models/${file}.ts`, import.meta.url)), name, SERIES_SETUP);
      expect(elapsed).toBeLessThan(1000);
    }, 30_000);
  }
});
