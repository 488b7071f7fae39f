import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { boostingClassifierFamily, boostingFamily } from '../../src/training/models/boosting.js';
import type { FitContext, FitRows } from '../../src/training/models/model.js';
import { mulberry32 } from '../../src/training/core/prng.js';
import { terminateWhileFitting } from './family-support.js';

const tabular = (seed = 1): FitContext => ({
  info: { timeOrdered: false, frequency: 'other', season: 1, periods: [], horizon: 0 },
  seed,
  params: { layersRequested: 0, learningRate: 0.1, epochs: 10, deviationTarget: 5 },
  featureNames: [],
  progress: () => {},
});

/** `n` rows of `width` uniform features in [-1, 1], seeded. */
function features(n: number, width: number, seed: number): number[][] {
  const random = mulberry32(seed);
  return Array.from({ length: n }, () => Array.from({ length: width }, () => 2 * random() - 1));
}

const rowsOf = (x: number[][], target: number[] | string[]): FitRows => ({ time: x.map((_, i) => i), features: x, target });

describe('boosting family', () => {
  it('learns a step in one feature among noise features, in the output\'s own units (known answer: 0 below, 5,000 above)', () => {
    const x = features(300, 4, 3);
    const y = x.map((r) => ((r[1] as number) > 0.2 ? 5000 : 0));
    const model = boostingFamily.fit(rowsOf(x, y), tabular());
    const test = features(200, 4, 4);
    const predicted = model.predict({ time: test.map((_, i) => i), features: test }) as number[];
    const errors = predicted.map((p, i) => Math.abs(p - ((test[i]![1] as number) > 0.2 ? 5000 : 0)));
    // Off the step, within 2% of it: each tree finds the step between its own half of the rows, so a few
    // thresholds fall a little off 0.2. (Steps capped as the classes' log-odds would leave thousands.)
    const offStep = errors.filter((_, i) => Math.abs((test[i]![1] as number) - 0.2) > 0.05);
    expect(Math.max(...offStep)).toBeLessThan(100);
    expect(model.describe()).toBe('gradient-boosted trees (100 rounds of depth-3 trees, shrinkage 0.1) on 4 features');
  });

  it('classifies XOR of two features, which no linear model and no single split can', () => {
    const label = (r: number[]) => ((r[0] as number) > 0 !== (r[1] as number) > 0 ? 'odd' : 'even');
    const x = features(400, 3, 5);
    const model = boostingClassifierFamily.fit(rowsOf(x, x.map(label)), tabular());
    const test = features(200, 3, 6);
    const predicted = model.predict({ time: test.map((_, i) => i), features: test }) as string[];
    const wrong = predicted.filter((p, i) => p !== label(test[i] as number[])).length;
    expect(wrong / test.length).toBeLessThan(0.08);
  });

  it('classifies three classes (one score per class)', () => {
    const label = (r: number[]) => ((r[0] as number) < -0.3 ? 'a' : (r[0] as number) < 0.4 ? 'b' : 'c');
    const x = features(300, 2, 7);
    const model = boostingClassifierFamily.fit(rowsOf(x, x.map(label)), tabular());
    const test = features(200, 2, 8);
    const predicted = model.predict({ time: test.map((_, i) => i), features: test }) as string[];
    expect(predicted.filter((p, i) => p !== label(test[i] as number[])).length / test.length).toBeLessThan(0.05);
    expect(new Set(predicted)).toEqual(new Set(['a', 'b', 'c']));
  });

  it('is deterministic for a seed, differs with another, and revives from its JSON state to the same predictions', () => {
    const x = features(150, 3, 9);
    const y = x.map((r) => Math.sin(3 * (r[0] as number)) + (r[2] as number));
    const test = { time: [0, 1, 2], features: features(3, 3, 10) };
    const a = boostingFamily.fit(rowsOf(x, y), tabular(11));
    const b = boostingFamily.fit(rowsOf(x, y), tabular(11));
    const c = boostingFamily.fit(rowsOf(x, y), tabular(12));
    expect(JSON.stringify(a.state)).toBe(JSON.stringify(b.state));
    expect(a.predict(test)).not.toEqual(c.predict(test));
    const revived = boostingFamily.revive(JSON.parse(JSON.stringify(a.state)) as typeof a.state);
    expect(revived.predict(test)).toEqual(a.predict(test));
  });

  it('applies to tabular data only, from 20 rows, and reports its progress up to 1', () => {
    const series = { ...tabular().info, timeOrdered: true };
    expect(boostingFamily.applies(series, 500)).toBe(false);
    expect(boostingFamily.applies(tabular().info, 19)).toBe(false);
    expect(boostingClassifierFamily.applies(tabular().info, 20)).toBe(true);
    const shares: number[] = [];
    const x = features(40, 2, 13);
    boostingFamily.fit(rowsOf(x, x.map((r) => r[0] as number)), { ...tabular(), progress: (s) => shares.push(s) });
    expect(shares.length).toBeGreaterThanOrEqual(100);
    expect(shares.at(-1)).toBe(1);
  });

  it('stops within a second when its training thread is terminated (abort)', async () => {
    const modulePath = fileURLToPath(new URL('../../src/training/models/boosting.ts', import.meta.url));
    const setup = `
      const features = Array.from({ length: 1000 }, (_, i) => [Math.sin(i), Math.cos(i * 1.3), (i % 17) / 17, (i % 5) / 5]);
      const target = features.map((r) => (r[0] > 0 ? (r[1] > 0 ? 'a' : 'b') : r[2] > 0.5 ? 'c' : 'd'));
      const rows = { time: features.map((_, i) => i), features, target };
      const info = { timeOrdered: false, frequency: 'other', season: 1, periods: [], horizon: 0 };
    `;
    expect(await terminateWhileFitting(modulePath, 'boostingClassifierFamily', setup)).toBeLessThan(1000);
  }, 30_000);
});
