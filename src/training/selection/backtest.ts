/**
 * Backtest splits over the known rows only (the rows to forecast never take part).
 *
 * Time-ordered data, rolling origin: up to WINDOWS windows at the end, each `horizon` time steps long; each
 * is predicted by a model fitted on every row before it, never shuffled. When the data is too short for one
 * window of the full horizon, the window shrinks (a quarter of the rows, then one step).
 * Tabular data: FOLDS-fold cross-validation over a seeded permutation (the row order carries no meaning).
 */
import { mulberry32, shuffleInPlace } from '../core/prng.js';

export const WINDOWS = 3;
export const FOLDS = 5;

export interface Split {
  /** Indices (into the known rows) to fit on, in their original order. */
  fit: number[];
  /** Indices to predict and score. */
  test: number[];
  /** Horizon step (1-based) of each test row; 0 in k-fold splits. */
  steps: number[];
}

export interface Backtest {
  scheme: 'rolling-origin' | 'k-fold';
  splits: Split[];
  /** Window length actually used (time steps); 0 for k-fold. */
  horizon: number;
}

export function rollingOrigin(times: number[], horizon: number, minFit: number, windows = WINDOWS): Backtest {
  const n = times.length;
  const attempts = [horizon, Math.max(1, Math.floor(n / 4)), 1].filter((h, i, all) => h >= 1 && all.indexOf(h) === i);
  for (const h of attempts) {
    const splits: Split[] = [];
    const lastTime = times[n - 1] as number;
    for (let k = 0; k < windows; k++) {
      const end = lastTime - k * h;
      const start = end - h;
      const fit: number[] = [];
      const test: number[] = [];
      const steps: number[] = [];
      times.forEach((t, i) => {
        if (t <= start) fit.push(i);
        else if (t <= end) {
          test.push(i);
          steps.push(t - start);
        }
      });
      if (fit.length < minFit || test.length === 0) break;
      splits.unshift({ fit, test, steps });
    }
    if (splits.length > 0) return { scheme: 'rolling-origin', splits, horizon: h };
  }
  return { scheme: 'rolling-origin', splits: [], horizon: 0 };
}

export function kFold(n: number, seed: number): Backtest {
  const folds = Math.min(FOLDS, n);
  const order = shuffleInPlace(
    Array.from({ length: n }, (_, i) => i),
    mulberry32(seed),
  );
  const foldOf = new Array<number>(n);
  order.forEach((row, position) => (foldOf[row] = position % folds));
  const splits: Split[] = [];
  for (let f = 0; f < folds; f++) {
    const fit: number[] = [];
    const test: number[] = [];
    for (let i = 0; i < n; i++) (foldOf[i] === f ? test : fit).push(i);
    if (fit.length > 0 && test.length > 0) splits.push({ fit, test, steps: test.map(() => 0) });
  }
  return { scheme: 'k-fold', splits, horizon: 0 };
}
