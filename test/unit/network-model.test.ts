import { describe, expect, it } from 'vitest';
import { linearFamily } from '../../src/training/models/linear.js';
import type { FitContext, FitRows, FittedModel, ModelFamily, SeriesInfo } from '../../src/training/models/model.js';
import { createNetworkFamily, networkClassifierFamily } from '../../src/training/models/network.js';
import { mulberry32 } from '../../src/training/core/prng.js';

const TIME: SeriesInfo = { timeOrdered: true, frequency: 'daily', season: 1, periods: [], horizon: 20 };
const TABULAR: SeriesInfo = { timeOrdered: false, frequency: 'none' as SeriesInfo['frequency'], season: 1, periods: [], horizon: 1 };

function context(info: SeriesInfo, seed = 7, progress: (share: number) => void = () => undefined, epochs = 400): FitContext {
  return {
    info,
    seed,
    params: { layersRequested: 0, learningRate: 0.05, epochs, deviationTarget: 10 },
    featureNames: ['x'],
    progress,
  };
}

/** A tiny least-squares line on time: the test's own base family (the engine passes the ridge `linear`). */
const trendBase: ModelFamily<{ a: number; b: number }> = {
  name: 'trend',
  kind: 'numeric',
  applies: () => true,
  cost: () => 1,
  fit(rows: FitRows) {
    const t = rows.time;
    const y = rows.target as number[];
    const n = t.length;
    const mt = t.reduce((s, v) => s + v, 0) / n;
    const my = y.reduce((s, v) => s + v, 0) / n;
    let sxy = 0;
    let sxx = 0;
    t.forEach((v, i) => {
      sxy += (v - mt) * ((y[i] as number) - my);
      sxx += (v - mt) ** 2;
    });
    const b = sxy / sxx;
    return this.revive({ a: my - b * mt, b });
  },
  revive(state): FittedModel<{ a: number; b: number }> {
    return { state, predict: (rows) => rows.time.map((t) => state.a + state.b * t), describe: () => 'trend line' };
  },
};

/** y = 3 t + 10 sin(2 x) with x uniform in [-1.5, 1.5]: a linear trend plus a nonlinear effect of a feature. */
function trendPlusNonlinear(n: number, seed: number) {
  const random = mulberry32(seed);
  const time = Array.from({ length: n }, (_, i) => i);
  const x = time.map(() => -1.5 + 3 * random());
  const y = time.map((t, i) => 3 * t + 10 * Math.sin(2 * (x[i] as number)));
  return { time, features: x.map((v) => [v]), target: y };
}

const mae = (a: number[], b: number[]) => a.reduce((s, v, i) => s + Math.abs(v - (b[i] as number)), 0) / a.length;

describe('network family (numeric)', () => {
  const all = trendPlusNonlinear(260, 1);
  const fit: FitRows = { time: all.time.slice(0, 200), features: all.features.slice(0, 200), target: all.target.slice(0, 200) };
  const future = { time: all.time.slice(200), features: all.features.slice(200) };
  const truth = all.target.slice(200);
  const family = createNetworkFamily(linearFamily);

  it('learns a nonlinear residual on top of a trend it extrapolates through the ridge base', () => {
    const model = family.fit(fit, context(TIME));
    const predicted = model.predict(future) as number[];
    const baseOnly = linearFamily.fit(fit, context(TIME)).predict(future) as number[];
    // The ridge base gets the trend and the linear part of the sine; the network most of the rest.
    expect(mae(baseOnly, truth)).toBeGreaterThan(3);
    expect(mae(predicted, truth)).toBeLessThan(1.2);
    expect(model.describe()).toMatch(/^ridge regression .* \+ brain\.js network \[1-8\] tanh, 3 seed\(s\) averaged, .* on its residual$/);
  });

  it('works on any base family (here a plain trend line)', () => {
    const predicted = createNetworkFamily(trendBase).fit(fit, context(TIME)).predict(future) as number[];
    expect(mae(predicted, truth)).toBeLessThan(1.2);
  });

  it('without a base, fails to extrapolate the trend (why the base is there)', () => {
    const plain = createNetworkFamily();
    const predicted = plain.fit(fit, context(TIME)).predict(future) as number[];
    expect(mae(predicted, truth)).toBeGreaterThan(20);
  });

  it('is deterministic for a given seed, and the seed matters', () => {
    const a = family.fit(fit, context(TIME, 11)).predict(future);
    const b = family.fit(fit, context(TIME, 11)).predict(future);
    const c = family.fit(fit, context(TIME, 12)).predict(future);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('predicts identically after a JSON round trip of its state', () => {
    const model = family.fit(fit, context(TIME, 3));
    const revived = family.revive(JSON.parse(JSON.stringify(model.state)) as typeof model.state);
    expect(revived.predict(future)).toEqual(model.predict(future));
    expect(revived.describe()).toBe(model.describe());
  });

  it('reports rising progress from 0 to 1, and an error thrown from progress (an abort) ends the fit', () => {
    const shares: number[] = [];
    family.fit(fit, context(TIME, 5, (s) => shares.push(s)));
    expect(shares[0]).toBe(0);
    expect(shares.at(-1)).toBe(1);
    expect(shares.every((s, i) => i === 0 || s >= (shares[i - 1] as number))).toBe(true);
    const original = Math.random;
    let calls = 0;
    expect(() =>
      family.fit(
        fit,
        context(TIME, 5, () => {
          if (++calls > 2) throw new Error('aborted');
        }),
      ),
    ).toThrow('aborted');
    expect(Math.random).toBe(original);
  });

  it('honours layersRequested and the epoch cap', () => {
    const ctx = context(TIME, 5, () => undefined, 30);
    ctx.params.layersRequested = 2;
    const model = family.fit(fit, ctx);
    expect(model.state.hidden).toEqual([8, 8]);
    expect(Math.max(...model.state.epochs)).toBeLessThanOrEqual(30);
  });

  it('keeps the cost of a fit bounded on big data', () => {
    expect(family.cost(TIME, 100_000)).toBeLessThan(family.cost(TIME, 1_000) * 5);
    expect(family.cost(TIME, 1_000)).toBeGreaterThan(100);
  });
});

describe('network family (categorical)', () => {
  /** Three classes by the quadrant-ish region of (a, b): separable but not linearly by one boundary. */
  function classes(n: number, seed: number) {
    const random = mulberry32(seed);
    const features = Array.from({ length: n }, () => [2 * random() - 1, 2 * random() - 1]);
    const target = features.map(([a, b]) => ((a as number) * (b as number) > 0 ? 'same' : (a as number) > 0 ? 'right' : 'left'));
    return { time: features.map((_, i) => i), features, target };
  }

  it('separates separable classes, deterministically, and survives a JSON round trip', () => {
    const train = classes(300, 2);
    const test = classes(100, 3);
    const model = networkClassifierFamily.fit(train, context(TABULAR, 9, () => undefined, 1000));
    const predicted = model.predict(test) as string[];
    const accuracy = predicted.filter((p, i) => p === test.target[i]).length / predicted.length;
    expect(accuracy).toBeGreaterThan(0.9);
    expect(networkClassifierFamily.fit(train, context(TABULAR, 9, () => undefined, 1000)).predict(test)).toEqual(predicted);
    const revived = networkClassifierFamily.revive(JSON.parse(JSON.stringify(model.state)) as typeof model.state);
    expect(revived.predict(test)).toEqual(predicted);
  });

  it('answers the only class when there is one', () => {
    const model = networkClassifierFamily.fit({ time: [0, 1, 2], features: [[0], [1], [2]], target: ['a', 'a', 'a'] }, context(TABULAR));
    expect(model.predict({ time: [3], features: [[5]] })).toEqual(['a']);
  });
});
