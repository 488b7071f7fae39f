import { describe, expect, it } from 'vitest';
import type { Backtest } from '../../src/training/selection/backtest.js';
import { CLEAR_SHARE, weighEvidence } from '../../src/training/series/evidence.js';
import type { FitRows, FittedModel, ModelFamily, SeriesInfo } from '../../src/training/models/model.js';
import { guardedFinalFit, implausiblePath } from '../../src/training/series/path-guard.js';
import { chooseWinner, type Scored, type Winner } from '../../src/training/selection/selection.js';

describe('the path guard: a forecast that cannot be right', () => {
  const rising = [100, 110, 121, 133, 146];
  const steps = [1, 2, 3];

  it('lets a path through that continues the history at its own pace', () => {
    expect(implausiblePath(rising, [160, 176, 194], steps)).toBeNull();
  });

  it('refuses a value at or below zero on a series that was always above zero, and names the step', () => {
    expect(implausiblePath(rising, [120, 40, -5], steps)).toBe('falls to -5 at step 3 on a series that was always above zero');
  });

  it('lets one member of a combination dip below zero, but not explode', () => {
    expect(implausiblePath(rising, [140, 130, -5], steps, 'member')).toBeNull();
    expect(implausiblePath(rising, [140, 130, -5e6], steps, 'member')).toMatch(/^reaches -5\.00e\+6 at step 3 from a last value of 146, past 3x the fastest/);
  });

  it('measures a series above zero by its ratios: a tenfold rise in hyperinflation is its own pace', () => {
    const hyper = [1, 10, 100, 1000];
    expect(implausiblePath(hyper, [1e4, 1e5], [1, 2])).toBeNull();
    // Three tenfold steps in one is past three times the fastest step.
    expect(implausiblePath(hyper, [1.01e6], [1])).toMatch(/^reaches 1.01e\+6 at step 1/);
  });

  it('measures a series that reaches zero or below by its differences', () => {
    const around = [-2, 1, -1, 2, 0];
    expect(implausiblePath(around, [-9, 9], [1, 2])).toBeNull();
    expect(implausiblePath(around, [10], [1])).toBe('reaches 10 at step 1 from a last value of 0, past 3x the fastest the series ever moved');
  });

  it('refuses what is not a number', () => {
    expect(implausiblePath(rising, [150, Number.NaN], steps)).toBe('gives no number at step 2');
    // A path driven by known drivers follows them past the history's pace, and still never crosses zero.
    expect(implausiblePath(rising, [1e6], [1], 'answer', true)).toBeNull();
    expect(implausiblePath(rising, [120, 40, -5], steps, 'answer', true)).toBe('falls to -5 at step 3 on a series that was always above zero');
  });
});

/** A family whose final fit forecasts `path` whatever the rows. */
function fixed(name: string, path: number[]): ModelFamily {
  const fitted: FittedModel = { predict: () => path, describe: () => name, state: null };
  return { name, kind: 'numeric', applies: () => true, cost: () => 1, fit: () => fitted, revive: () => fitted };
}

describe('the guarded final fit', () => {
  const history = [100, 110, 121, 133, 146];
  const rows = { time: [5, 6, 7], features: [[], [], []] };
  const winnerOf = (families: ModelFamily[], combine?: 'median'): Winner => ({
    members: families.map((family) => ({ family, weight: 1 / families.length })),
    ...(combine ? { combine } : {}),
    predictions: [],
    error: 1,
    description: families.map((f) => f.name).join(' + '),
  });

  /** The guard on `winner`, whose next choice is always `next`; answers what it answered and each exclusion it asked. */
  function guard(winner: Winner, next: Winner, history: number[]) {
    const excluded: string[][] = [];
    const guarded = guardedFinalFit(
      winner,
      (names) => {
        excluded.push([...names]);
        return next;
      },
      (family) => family.fit({ time: [], features: [], target: [] }, {} as never),
      (path, of) => implausiblePath(history, path, [1, 2, 3], of),
      rows,
    );
    return { guarded, excluded };
  }

  it('replaces a winner whose member explodes by the next choice among the rest, and says so', () => {
    const exploding = fixed('ar', [1e3, 1e6, 1e9]);
    const steady = fixed('theta', [150, 155, 160]);
    const { guarded, excluded } = guard(winnerOf([steady, exploding]), winnerOf([steady]), history);
    expect(excluded).toEqual([['ar']]);
    expect(guarded.members.map((m) => m.family.name)).toEqual(['theta']);
    expect(guarded.notes).toEqual([`theta + ar not answered: ar's final fit reaches 1000 at step 1 from a last value of 146, past 3x the fastest the series ever moved; theta instead`]);
  });

  it('where only the combination falls below zero, drops the members that would alone, and keeps the last value', () => {
    const naive = fixed('naive', [146, 146, 146]);
    const falling = fixed('holt', [120, 20, -200]);
    const { guarded, excluded } = guard(winnerOf([naive, falling]), winnerOf([naive]), [100, 150, 90, 140, 146]);
    expect(excluded).toEqual([['holt']]);
    expect(guarded.notes).toEqual(['naive + holt not answered: the combined forecast falls to -27 at step 3 on a series that was always above zero; naive instead']);
  });

  it('answers the last candidate as it is where no other is left, and says so', () => {
    const exploding = fixed('ar', [1e3, 1e6, 1e9]);
    const guarded = guardedFinalFit(winnerOf([exploding]), () => null, (family) => family.fit({ time: [], features: [], target: [] }, {} as never), (path, of) => implausiblePath(history, path, [1, 2, 3], of), rows);
    expect(guarded.members.map((m) => m.family.name)).toEqual(['ar']);
    expect(guarded.notes[0]).toMatch(/^ar: ar's final fit reaches 1000 at step 1 .+; no other candidate, answered as it is$/);
  });
});

describe('weak evidence on a yearly series answers the simple reference', () => {
  // Three windows of two rows; the actual values are all 0, so an error is the mean absolute prediction.
  const backtest: Backtest = {
    scheme: 'rolling-origin',
    splits: [
      { fit: [0, 1], test: [2, 3], steps: [1, 2] },
      { fit: [0, 1, 2, 3], test: [4, 5], steps: [1, 2] },
      { fit: [0, 1, 2, 3, 4, 5], test: [6, 7], steps: [1, 2] },
    ],
    horizon: 2,
  };
  const data: FitRows = { time: [0, 1, 2, 3, 4, 5, 6, 7], features: Array.from({ length: 8 }, () => []), target: [0, 0, 0, 0, 0, 0, 0, 0] };
  const yearly: SeriesInfo = { timeOrdered: true, frequency: 'annual', season: 1, periods: [], horizon: 2 };
  const scored = (name: string, windows: number[]): Scored => {
    const predictions = windows.map((e) => [e, e]);
    return { family: { name } as ModelFamily, predictions, error: windows.reduce((a, b) => a + b, 0) / windows.length, description: name };
  };

  it('keeps a winner whose windows are clearly better than the better of the last value and drift', () => {
    const candidates = [scored('naive', [4, 4, 4]), scored('drift', [3, 3, 3]), scored('sarima', [1, 1, 1])];
    const own = chooseWinner(candidates, backtest, data, 'numeric');
    expect(weighEvidence(own, candidates, backtest, data, yearly)).toEqual({ winner: own });
  });

  it('answers drift where the winner is better only within the noise of three windows, and says why', () => {
    // sarima wins two windows and loses one: 0.76 of drift's error in geometric mean, above CLEAR_SHARE.
    const candidates = [scored('naive', [5, 5, 5]), scored('drift', [3, 3, 3]), scored('sarima', [1, 2, 6])];
    const own = chooseWinner(candidates, backtest, data, 'numeric');
    expect(own.members.map((m) => m.family.name)).toEqual(['sarima']);
    const { winner, note } = weighEvidence(own, candidates, backtest, data, yearly);
    expect(winner.members.map((m) => m.family.name)).toEqual(['drift']);
    expect(winner.error).toBe(3);
    expect(note).toBe(`weak evidence on 3 windows of 2: sarima scored 0.76 of drift's error (geometric mean over the windows), not the ${CLEAR_SHARE.toFixed(2)} or less that counts as clear: drift answered`);
  });

  it('keeps a damped trend that wins alone: it is a simple reference itself', () => {
    const damped = { ...scored('ets', [1, 2, 6]), description: 'ETS(A,Ad,N) damped trend (alpha 0.50, phi 0.90), by AICc' };
    const candidates = [scored('naive', [5, 5, 5]), scored('drift', [3, 3, 3]), damped];
    const own = chooseWinner(candidates, backtest, data, 'numeric');
    expect(own.members.map((m) => m.family.name)).toEqual(['ets']);
    expect(weighEvidence(own, candidates, backtest, data, yearly).winner).toBe(own);
    const holt = { ...damped, description: 'ETS(A,A,N) Holt linear trend (alpha 0.50), by AICc' };
    const withHolt = [candidates[0]!, candidates[1]!, holt];
    expect(weighEvidence(chooseWinner(withHolt, backtest, data, 'numeric'), withHolt, backtest, data, yearly).winner.members[0]?.family.name).toBe('drift');
  });

  it('leaves monthly series to the backtest', () => {
    const candidates = [scored('naive', [5, 5, 5]), scored('drift', [3, 3, 3]), scored('sarima', [1, 2, 6])];
    const own = chooseWinner(candidates, backtest, data, 'numeric');
    expect(weighEvidence(own, candidates, backtest, data, { ...yearly, frequency: 'monthly', season: 12, periods: [12] }).winner).toBe(own);
  });
});
