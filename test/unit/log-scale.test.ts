import { describe, expect, it } from 'vitest';
import { trainModel } from '../../src/training/run/engine.js';
import { familyNamed } from '../../src/training/models/candidates.js';
import { naiveFamilies } from '../../src/training/models/naive.js';
import { noise, rowsOf, seasonContext } from './family-support.js';
import type { ColumnSpec } from '../../src/training/core/types.js';

const logDrift = familyNamed('numeric', 'log_drift');
const drift = naiveFamilies.find((f) => f.name === 'drift');
const future = { time: [40, 41, 42], features: [[], [], []] };
// 5% a step: a straight line in logarithms.
const growth = Array.from({ length: 40 }, (_, i) => 100 * 1.05 ** i);

describe('families on logarithms (Box-Cox lambda 0)', () => {
  it('extends geometric growth exactly, where the drift of the levels falls behind it', () => {
    const expected = [40, 41, 42].map((t) => 100 * 1.05 ** t);
    const geometric = logDrift.fit(rowsOf(growth), seasonContext(1)).predict(future) as number[];
    geometric.forEach((v, i) => expect(v).toBeCloseTo(expected[i] as number, 6));
    const linear = drift?.fit(rowsOf(growth), seasonContext(1)).predict(future) as number[];
    expect(linear[2]).toBeLessThan(0.95 * (expected[2] as number));
  });

  it('predicts the same after a JSON round trip and says it works on logarithms', () => {
    const random = noise(3);
    const values = growth.map((v) => v * Math.exp(0.02 * random()));
    for (const name of ['log_drift', 'log_ets', 'log_theta', 'log_differenced', 'log_differenced_ar']) {
      const family = familyNamed('numeric', name);
      const fitted = family.fit(rowsOf(values), seasonContext(4));
      const revived = family.revive(JSON.parse(JSON.stringify(fitted.state)));
      expect(revived.predict(future)).toEqual(fitted.predict(future));
      expect(fitted.describe()).toMatch(/on logarithms$/);
    }
  });

  it('refuses a value at or below zero, which has no logarithm', () => {
    expect(() => logDrift.fit(rowsOf([3, 2, 0, 4]), seasonContext(1))).toThrow(/at or below zero/);
  });

  it('drift, ETS and Theta on logarithms compete only in the choice across a panel of series above zero', () => {
    const columns: ColumnSpec[] = [
      { name: 'country', role: 'input', kind: 'categorical' },
      { name: 'year', role: 'date', kind: 'numeric', datePart: 'year' },
      { name: 'value', role: 'output', kind: 'numeric' },
    ];
    // Four countries growing 2%, 4%, 6% and 8% a year, with a wobble of 1%; the last 4 years hidden.
    const truth = (s: number, t: number) => 1000 * (s + 1) * (1 + 0.02 * (s + 1)) ** t * (1 + 0.01 * Math.sin(t * (s + 2)));
    const panel = (shift: number) => ({
      header: ['country', 'year', 'value'],
      columns,
      rows: [0, 1, 2, 3].flatMap((s) => Array.from({ length: 30 }, (_, t) => [`c${s}`, String(1990 + t), t < 26 ? (truth(s, t) - shift).toFixed(2) : ''])),
      params: { seed: 7 },
    });
    const growing = trainModel(panel(0));
    const output = growing.selection?.outputs[0];
    expect(output?.chosen).toMatch(/^log_/);
    expect(output?.description).toMatch(/chosen across 4 series/);
    for (const [s, key] of ['c0', 'c1', 'c2', 'c3'].entries()) {
      const values = growing.forecasts.filter((f) => f.values.country === key).map((f) => Number(f.values.value));
      values.forEach((v, j) => expect(Math.abs(v / truth(s, 26 + j) - 1)).toBeLessThan(0.03));
    }
    // Shifted down by 1,500, the first country goes below zero: it has no logarithm, and the choice across the
    // series takes only families that scored on all of them.
    const shifted = trainModel(panel(1500)).selection?.outputs[0];
    expect(shifted?.chosen).not.toMatch(/^log_/);
    const logs = shifted?.candidates.filter((c) => c.name.startsWith('log_')) ?? [];
    expect(logs.map((c) => c.description)).toEqual(['log_drift', 'log_ets', 'log_theta', 'log_differenced', 'log_differenced_ar'].map((name) => `${name} on 3 of 4 series`));
    // One series alone never tries them (its choice rests on its own 3 windows).
    const alone = trainModel({ header: ['year', 'value'], columns: columns.slice(1), rows: panel(0).rows.slice(90).map((row) => row.slice(1)), params: { seed: 7 } });
    expect(alone.selection?.outputs[0]?.candidates.map((c) => c.name).filter((name) => name.startsWith('log_'))).toEqual([]);
  });

  it("the differencing on logarithms competes in the own choice of a panel's few series too, never of one series alone", () => {
    const columns: ColumnSpec[] = [
      { name: 'region', role: 'input', kind: 'categorical' },
      { name: 'year', role: 'date', kind: 'numeric', datePart: 'year' },
      { name: 'value', role: 'output', kind: 'numeric' },
    ];
    // Growth that fades from 12% to 2% a year: the differences of the logarithms are an AR(1) around 2%, which
    // auto.arima's differencing on logarithms with AR terms fits exactly and no family on the levels does.
    const level = (s: number, t: number) => 500 * (s + 1) * Math.exp(0.02 * t + (0.1 + 0.05 * s) * (1 - 0.8 ** t) / 0.2);
    const rows = [0, 1].flatMap((s) => Array.from({ length: 30 }, (_, t) => [`r${s}`, String(1990 + t), t < 26 ? level(s, t).toFixed(3) : '']));
    const fading = trainModel({ header: ['region', 'year', 'value'], columns, rows, params: { seed: 7 } });
    const chosen = fading.selection?.panel?.perSeries.map((s) => s.outputs[0]?.chosen);
    expect(chosen).toEqual(['log_differenced_ar', 'log_differenced_ar']);
    for (const [s, key] of ['r0', 'r1'].entries()) {
      const values = fading.forecasts.filter((f) => f.values.region === key).map((f) => Number(f.values.value));
      values.forEach((v, j) => expect(Math.abs(v / level(s, 26 + j) - 1)).toBeLessThan(0.005));
    }
    // Drift, ETS and Theta on logarithms are scored there and never taken: their windows would rank them by noise.
    expect(fading.selection?.outputs[0]?.candidates.map((c) => c.name)).toEqual(expect.arrayContaining(['log_drift', 'log_ets', 'log_theta']));
    expect(Object.keys(fading.selection?.panel?.wins ?? {}).filter((name) => /^log_(drift|ets|theta)$/.test(name))).toEqual([]);
    // One series alone does not try it (the standing single-series tables: US nonfarm employment 79.4 -> 105).
    const alone = trainModel({ header: ['year', 'value'], columns: columns.slice(1), rows: rows.slice(0, 30).map((row) => row.slice(1)), params: { seed: 7 } });
    expect(alone.selection?.outputs[0]?.candidates.map((c) => c.name).filter((name) => name.startsWith('log_'))).toEqual([]);
  });
});
