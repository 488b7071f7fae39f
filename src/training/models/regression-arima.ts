/**
 * Regression with ARIMA errors, as R's `auto.arima(y, xreg)`: the known drivers' effect (FitRows.features, the
 * user's inputs filled in the rows to forecast) fitted together with an ARMA model of what they leave,
 * differenced when that remainder needs it:
 *  - the series is regressed on the drivers (least squares with an intercept); KPSS on the residuals decides the
 *    differencing (stats/stationarity.ts, as auto.arima's ndiffs);
 *  - differenced: the changes are regressed on the drivers' changes, with a drift where it pays by AICc;
 *  - the residuals get an ARMA(p <= 3, q <= 2) by Hannan-Rissanen (stats/arma.ts; a series too short for one keeps
 *    white noise, as auto.arima mostly does on 20 annual rows).
 * A forecast is the drivers' effect at the row to forecast plus the errors' path: from the last known value, the
 * drift and the drivers' change since it when differenced. Least squares is unregularised, as R's: a driver
 * constant over the fit rows is left out, and collinear ones make the fit decline (the engine says so).
 */
import { gaussianAicc } from '../stats/closed-forms.js';
import { armaPath, fitArma, innovationsOf, type Arma, type ArmaMemory } from '../stats/arma.js';
import { leastSquares } from '../stats/least-squares.js';
import { kpssDifferences } from '../stats/stationarity.js';
import { describeEffects, driverColumns, effectsOf } from './drivers.js';
import type { DriverEffect, FitContext, FitRows, FittedModel, ModelFamily, PredictRows } from './model.js';

export interface RegressionArimaState {
  /** 0: levels with an intercept; 1: changes, with `drift`. */
  d: 0 | 1;
  intercept: number;
  drift: number;
  /** Features used (indices into FitRows.features) and their coefficients. */
  columns: number[];
  beta: number[];
  arma: Arma & ArmaMemory;
  lastTime: number;
  lastValue: number;
  /** The used features at the last fit row (the differenced form's starting point). */
  lastX: number[];
  /** Each driver's fitted effect per unit of the user's column. */
  effects: DriverEffect[];
}

/** Fewest fit rows beyond the coefficients: below it a regression has nothing left to test its errors on. */
const SPARE_ROWS = 4;

const column = (rows: number[][], j: number) => Float64Array.from(rows, (r) => r[j] as number);

function fitRegression(x: number[][], y: number[], columns: number[], intercept: boolean): { beta: number[]; intercept: number; rss: number; residuals: number[] } | null {
  const cols = columns.map((j) => column(x, j));
  if (intercept) cols.unshift(new Float64Array(y.length).fill(1));
  const fit = leastSquares(cols, Float64Array.from(y));
  if (!fit || fit.beta.some((b) => !Number.isFinite(b))) return null;
  const c = intercept ? (fit.beta[0] as number) : 0;
  const beta = intercept ? fit.beta.slice(1) : fit.beta;
  const residuals = y.map((v, i) => v - c - columns.reduce((s, j, k) => s + (beta[k] as number) * ((x[i] as number[])[j] as number), 0));
  return { beta, intercept: c, rss: fit.rss, residuals };
}

function errorsModel(residuals: number[]): Arma & ArmaMemory {
  const e = Float64Array.from(residuals);
  const arma = fitArma(e);
  const { innovations } = innovationsOf(e, arma);
  const keep = Math.max(arma.ar.length, arma.ma.length);
  return { ...arma, lastErrors: keep > 0 ? residuals.slice(-keep) : [], lastInnovations: keep > 0 ? Array.from(innovations.subarray(innovations.length - keep)) : [] };
}

function revive(state: RegressionArimaState): FittedModel<RegressionArimaState> {
  const effect = (x: number[]) => state.columns.reduce((s, j, k) => s + (state.beta[k] as number) * (x[j] ?? 0), 0);
  const lastEffect = state.columns.reduce((s, _, k) => s + (state.beta[k] as number) * (state.lastX[k] as number), 0);
  return {
    state,
    effects: () => state.effects,
    predict(rows: PredictRows) {
      const steps = rows.time.reduce((m, t) => Math.max(m, Math.round(t - state.lastTime)), 0);
      const path = armaPath(state.arma, Math.max(0, steps));
      const cumulative: number[] = [];
      path.reduce((s, v, k) => (cumulative[k] = s + v), 0);
      return rows.time.map((t, i) => {
        const x = rows.features[i] as number[];
        const h = Math.round(t - state.lastTime);
        const errors = h >= 1 ? (state.d === 1 ? (cumulative[h - 1] as number) : (path[h - 1] as number)) : 0;
        if (state.d === 0) return state.intercept + effect(x) + errors;
        return state.lastValue + (t - state.lastTime) * state.drift + effect(x) - lastEffect + errors;
      });
    },
    describe() {
      const order = `ARIMA(${state.arma.ar.length},${state.d},${state.arma.ma.length})`;
      return `regression on ${describeEffects(state.effects)} with ${order} errors${state.d === 1 && state.drift !== 0 ? ' and drift' : ''}`;
    },
  };
}

function fit(rows: FitRows, ctx: FitContext): FittedModel<RegressionArimaState> {
  const y = rows.target as number[];
  const x = rows.features;
  const columns = driverColumns(x);
  if (columns.length === 0) throw new Error('no known driver varies over the fit rows');
  if (y.length < columns.length + 1 + SPARE_ROWS) throw new Error(`too few rows for ${columns.length} drivers`);
  const levels = fitRegression(x, y, columns, true);
  if (!levels) throw new Error('the drivers are collinear');
  ctx.progress(0.4);
  const d = Math.min(1, kpssDifferences(levels.residuals)) as 0 | 1;
  const n = y.length;
  const lastX = columns.map((j) => (x[n - 1] as number[])[j] as number);
  let state: RegressionArimaState;
  if (d === 0) {
    state = { d, intercept: levels.intercept, drift: 0, columns, beta: levels.beta, arma: errorsModel(levels.residuals), lastTime: rows.time[n - 1] as number, lastValue: y[n - 1] as number, lastX, effects: [] };
  } else {
    // Changes between consecutive steps only: a gap in the time axis is no one-step change.
    const dx: number[][] = [];
    const dy: number[] = [];
    for (let i = 1; i < n; i++) {
      if ((rows.time[i] as number) - (rows.time[i - 1] as number) !== 1) continue;
      dx.push((x[i] as number[]).map((v, j) => v - ((x[i - 1] as number[])[j] as number)));
      dy.push((y[i] as number) - (y[i - 1] as number));
    }
    const moving = columns.filter((j) => dx.some((r) => r[j] !== dx[0]?.[j]));
    if (moving.length === 0 || dy.length < moving.length + 1 + SPARE_ROWS) throw new Error('too few changes for the drivers');
    const withDrift = fitRegression(dx, dy, moving, true);
    const without = fitRegression(dx, dy, moving, false);
    if (!withDrift || !without) throw new Error('the drivers are collinear');
    const drifts = gaussianAicc(withDrift.rss, dy.length, moving.length + 2) < gaussianAicc(without.rss, dy.length, moving.length + 1);
    const chosen = drifts ? withDrift : without;
    state = {
      d,
      intercept: 0,
      drift: chosen.intercept,
      columns: moving,
      beta: chosen.beta,
      arma: errorsModel(chosen.residuals),
      lastTime: rows.time[n - 1] as number,
      lastValue: y[n - 1] as number,
      lastX: moving.map((j) => (x[n - 1] as number[])[j] as number),
      effects: [],
    };
  }
  state.effects = effectsOf(state.columns, state.beta, ctx);
  ctx.progress(1);
  return revive(state);
}

export const regressionArimaFamily: ModelFamily<RegressionArimaState> = {
  name: 'regression_arima',
  kind: 'numeric',
  traits: { readsDrivers: true, panelCost: 'cheap' },
  applies: (info, n) => info.timeOrdered && n >= 8,
  cost: (_info, n) => 2 + n / 10_000,
  fit,
  revive,
};
