import { describe, expect, it } from 'vitest';
import { panels } from '../support/global-panels.js';
import { binOf, fitHistogramBoosting, predictHistogramBoosting } from '../../src/training/models/histogram-boosting.js';

/** One-step rows of the real monthly stocks: the last 12 returns as features, the next return as target. */
function stockReturns() {
  const stocks = panels().find((p) => p.id === 'stocks');
  const rows: number[][] = [];
  const target: number[] = [];
  for (const s of stocks?.series ?? []) {
    const r = s.values.slice(1).map((v, i) => v / (s.values[i] as number) - 1);
    for (let t = 12; t < r.length; t++) {
      rows.push(r.slice(t - 12, t));
      target.push(r[t] as number);
    }
  }
  return { x: Float64Array.from(rows.flat()), y: Float64Array.from(target), n: target.length, width: 12 };
}

describe('histogram boosting', () => {
  it('bins NaN apart and every number by the edges above it', () => {
    const edges = Float64Array.from([1, 2, 5]);
    expect([NaN, -3, 1, 1.5, 2, 4, 5, 9].map((v) => binOf(edges, v))).toEqual([0, 1, 1, 2, 2, 3, 3, 4]);
  });

  it('learns a step of its feature exactly', () => {
    // Feature: the month of the stocks panel's rows; target: whether the month is in the first half of the year.
    const { n } = stockReturns();
    const x = Float64Array.from({ length: n }, (_, i) => i % 12);
    const y = Float64Array.from(x, (m) => (m < 6 ? 10 : -10));
    const model = fitHistogramBoosting(x, y, n, 1, { rounds: 200, depth: 2, shrinkage: 0.1, subsample: 0.5, minLeaf: 5, lambda: 0, seed: 1 });
    expect(predictHistogramBoosting(model, [2])).toBeCloseTo(10, 3);
    expect(predictHistogramBoosting(model, [8])).toBeCloseTo(-10, 3);
  });

  it('stops early on returns it cannot predict, and is deterministic', () => {
    const { x, y, n, width } = stockReturns();
    const options = { rounds: 300, depth: 5, shrinkage: 0.05, subsample: 0.5, minLeaf: 20, lambda: 1, seed: 4, patience: 50 };
    const model = fitHistogramBoosting(x, y, n, width, options);
    // Monthly returns are close to noise: a handful of rounds, not 300.
    expect(model.roots.length).toBeLessThan(50);
    const again = fitHistogramBoosting(x, y, n, width, options);
    expect(Array.from(again.value)).toEqual(Array.from(model.value));
    const row = Array.from(x.subarray(0, width));
    expect(predictHistogramBoosting(again, row)).toBe(predictHistogramBoosting(model, row));
  });
});
