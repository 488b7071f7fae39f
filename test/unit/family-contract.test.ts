import { describe, expect, it } from 'vitest';
import { FAMILIES, familiesFor, familyNamed } from '../../src/training/models/candidates.js';
import { precomputedFamily } from '../../src/training/models/global-forecast.js';
import type { FitContext, FitRows, FittedModel, ModelFamily, PredictRows, SeriesInfo } from '../../src/training/models/model.js';
import { NAIVE_NAMES } from '../../src/training/models/naive.js';
import { noise } from './family-support.js';

/**
 * What every registered family owes the engine (models/model.ts), checked on each of them, so a new family is
 * held to it by being registered: it fits the data it applies to, its state survives a JSON round trip (a stored
 * model revives after a restart and must forecast the same digits), the same seed gives the same fit, and a short
 * or constant series is declined by `applies` or fitted without an exception. Bands are none of a family's
 * business: the engine draws them from the backtest windows' errors (intervals.ts), whatever the family.
 */

interface Case {
  name: string;
  info: SeriesInfo;
  rows: FitRows;
  /** The rows after the fit rows, with their features. */
  ahead: PredictRows;
}

const HORIZON = 6;

/** A time series of `n` fitted values and HORIZON ahead, without features (as an upload of a date and a value). */
function series(name: string, info: Omit<SeriesInfo, 'horizon' | 'timeOrdered'>, n: number, value: (t: number) => number): Case {
  const time = Array.from({ length: n }, (_, t) => t);
  const ahead = Array.from({ length: HORIZON }, (_, k) => n + k);
  return {
    name,
    info: { ...info, timeOrdered: true, horizon: HORIZON },
    rows: { time, features: time.map(() => []), target: time.map(value) },
    ahead: { time: ahead, features: ahead.map(() => []) },
  };
}

/** Rows without a time axis: three standardised inputs, and the output a numeric or class label of them. */
function table(name: string, n: number, output: (x: number[], e: number) => number | string): Case {
  const random = noise(11);
  const features = Array.from({ length: n + HORIZON }, () => [random() / 2, random() / 2, random() / 2]);
  const target = features.slice(0, n).map((x) => output(x, random())) as number[] | string[];
  const time = features.map((_, i) => i);
  return {
    name,
    info: { timeOrdered: false, frequency: 'other', season: 1, periods: [], horizon: HORIZON },
    rows: { time: time.slice(0, n), features: features.slice(0, n), target },
    ahead: { time: time.slice(n), features: features.slice(n) },
  };
}

/** The case with a known driver, a standardised price that steps every few months, moving the value against it (the families that model drivers apply only with one). */
function withPrice(c: Case): Case {
  const price = (t: number) => [Math.round(Math.sin(t / 5) * 3) / 3];
  const rows = { ...c.rows, features: c.rows.time.map(price), target: (c.rows.target as number[]).map((v, i) => v - 30 * ((price(c.rows.time[i] as number)[0] as number)) ) };
  return { ...c, rows, ahead: { ...c.ahead, features: c.ahead.time.map(price) } };
}

const monthlyNoise = noise(3);
const annualNoise = noise(5);
const hourlyNoise = noise(7);
/**
 * In order: a family's own case is the first it applies to. Sales-like months with trend and a year's season; a
 * country's population by year, growing in percent, without a cycle; hourly load with a day and a week; then
 * tabular rows (the tree families apply to nothing else) with a numeric output and with classes.
 */
const CASES: Case[] = [
  series('monthly', { frequency: 'monthly', season: 12, periods: [12] }, 60, (t) => 200 + 1.5 * t + 25 * Math.sin((2 * Math.PI * t) / 12) + 4 * monthlyNoise()),
  series('annual', { frequency: 'annual', season: 1, periods: [] }, 40, (t) => 5000 * 1.02 ** t * (1 + 0.01 * annualNoise())),
  series('hourly', { frequency: 'hourly', season: 24, periods: [24, 168] }, 2 * 168 + 24, (t) => 300 + 80 * Math.sin((2 * Math.PI * t) / 24) + 40 * Math.sin((2 * Math.PI * t) / 168) + 10 * hourlyNoise()),
  table('tabular', 60, (x, e) => 10 + 3 * (x[0] as number) - 2 * (x[1] as number) + 0.3 * e),
  table('classes', 60, (x) => ((x[0] as number) + (x[1] as number) > 0.4 ? 'high' : (x[0] as number) + (x[1] as number) < -0.4 ? 'low' : 'mid')),
  withPrice(series('monthly with a price', { frequency: 'monthly', season: 12, periods: [12] }, 60, (t) => 200 + 1.5 * t + 4 * monthlyNoise())),
];

const context = (info: SeriesInfo, seed = 17): FitContext => ({
  info,
  seed,
  params: { layersRequested: 0, learningRate: 0.1, epochs: 20, deviationTarget: 5 },
  featureNames: [],
  progress: () => {},
});

const kindOf = (c: Case) => (typeof c.rows.target[0] === 'string' ? 'categorical' : 'numeric');
const hasDrivers = (c: Case) => (c.rows.features[0]?.length ?? 0) > 0;
const homeOf = (family: ModelFamily) =>
  CASES.find((c) => kindOf(c) === family.kind && family.applies(c.info, c.rows.time.length) && (!family.traits?.readsDrivers || (c.info.timeOrdered && hasDrivers(c))));

/** Every fitted row and the rows ahead: one-step values in the history, forecasts past it. */
const everyRow = (c: Case): PredictRows => ({ time: [...c.rows.time, ...c.ahead.time], features: [...c.rows.features, ...c.ahead.features] });

function expectUsable(family: ModelFamily, fitted: FittedModel, rows: PredictRows): void {
  const values = fitted.predict(rows) as (number | string)[];
  expect(values).toHaveLength(rows.time.length);
  for (const v of values) {
    if (family.kind === 'numeric') expect(Number.isFinite(v)).toBe(true);
    else expect(typeof v).toBe('string');
  }
  expect(fitted.describe()).toMatch(/\S/);
}

/** The first `n` rows of a case. */
const shortOf = (c: Case, n: number): Case => ({
  ...c,
  rows: { time: c.rows.time.slice(0, n), features: c.rows.features.slice(0, n), target: c.rows.target.slice(0, n) },
  ahead: { time: c.ahead.time.map((_, k) => n + k), features: c.ahead.features },
});

/** The case with every value its first one. */
const constantOf = (c: Case): Case => ({ ...c, rows: { ...c.rows, target: c.rows.target.map(() => c.rows.target[0]) as number[] | string[] } });

/** A family declines a case by `applies` (without an exception), or fits it and predicts usable values. */
function expectDeclinedOrFitted(family: ModelFamily, c: Case): void {
  const n = c.rows.time.length;
  if (!family.applies(c.info, n)) return;
  const fitted = family.fit(c.rows, context(c.info));
  expectUsable(family, fitted, everyRow(c));
}

const label = (family: ModelFamily) => `${family.name} (${family.kind})`;
/** Families every series or a plan across series tries; the global model is fitted across a panel (below). */
const tried = FAMILIES.filter((f) => f.traits?.tried !== 'panel');

describe('the registry', () => {
  it('names each family once per kind, and revives each by that name', () => {
    for (const family of FAMILIES) expect(familyNamed(family.kind, family.name)).toBe(family);
    expect(new Set(FAMILIES.map((f) => `${f.kind} ${f.name}`)).size).toBe(FAMILIES.length);
  });

  it('offers every series the families with no `tried` trait, and only a plan across series the pooled ones', () => {
    expect(familiesFor('numeric').every((f) => f.traits?.tried === undefined)).toBe(true);
    expect(familiesFor('numeric', 'pooled').map((f) => f.name)).toEqual(['differenced', 'differenced_ar', 'log_drift', 'log_ets', 'log_theta', 'log_differenced', 'log_differenced_ar']);
  });

  it('keeps every baseline among the names a report ranks baselines by', () => {
    const baselines = FAMILIES.filter((f) => f.traits?.baseline !== undefined).map((f) => f.name);
    expect(baselines.length).toBeGreaterThan(0);
    expect(new Set(baselines)).toEqual(new Set(NAIVE_NAMES));
  });
});

describe.each(tried.map((family) => [label(family), family] as const))('the family %s', (_label, family) => {
  const home = homeOf(family);

  it('applies to one of the cases', () => {
    expect(home?.name).toBeDefined();
  });

  it('fits, predicts every row, and the revived JSON state predicts the same digits', () => {
    const c = home as Case;
    const fitted = family.fit(c.rows, context(c.info));
    const rows = everyRow(c);
    expectUsable(family, fitted, rows);
    const stored = JSON.parse(JSON.stringify(fitted.state)) as unknown;
    const revived = family.revive(stored);
    // A revive that drops or changes a field of the state fails here even where the forecast does not read it.
    expect(JSON.parse(JSON.stringify(revived.state))).toEqual(stored);
    expect(revived.predict(rows)).toEqual(fitted.predict(rows));
    expect(revived.describe()).toBe(fitted.describe());
  });

  it('fits the same for the same seed', () => {
    const c = home as Case;
    const [a, b] = [family.fit(c.rows, context(c.info)), family.fit(c.rows, context(c.info))];
    expect(JSON.stringify(b.state)).toBe(JSON.stringify(a.state));
    expect(b.predict(everyRow(c))).toEqual(a.predict(everyRow(c)));
  });

  it('declines or fits a short series and a constant one', () => {
    const c = home as Case;
    for (const n of [1, 2, 5]) expectDeclinedOrFitted(family, shortOf(c, n));
    expectDeclinedOrFitted(family, constantOf(c));
  });
});

describe('a family fitted across a panel (the global model)', () => {
  const global = FAMILIES.filter((f) => f.traits?.tried === 'panel');

  it('applies to no series on its own, and its stored forecast revives to the same digits', () => {
    expect(global.length).toBeGreaterThan(0);
    for (const family of global) {
      for (const c of CASES) expect(family.applies(c.info, c.rows.time.length)).toBe(false);
      const fitted = precomputedFamily(family.name, { first: 60, values: [1.5, 2.25, 3], description: 'global boosting' }).fit(CASES[0]?.rows as FitRows, context((CASES[0] as Case).info));
      const stored = JSON.parse(JSON.stringify(fitted.state)) as unknown;
      const revived = family.revive(stored);
      const rows = { time: [59, 60, 61, 62, 63], features: [[], [], [], [], []] };
      expect(JSON.parse(JSON.stringify(revived.state))).toEqual(stored);
      expect(revived.predict(rows)).toEqual([1.5, 1.5, 2.25, 3, 3]);
    }
  });
});
