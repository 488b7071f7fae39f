/**
 * The trend regression on known drivers, as R's `tslm(y ~ trend + season + x)`: least squares of the series on
 * an intercept, a linear trend in time, season dummies where the fit rows hold two seasons, and the drivers
 * (FitRows.features, the user's inputs filled in the rows to forecast). Unregularised, as R's: where `linear`
 * (ridge, its penalty by cross-validation) shrinks a driver it cannot tell from the trend, this one reports the
 * effect least squares finds, and the backtest says which a series should believe.
 */
import { leastSquares } from '../stats/least-squares.js';
import { describeEffects, driverColumns, effectsOf } from './drivers.js';
import type { DriverEffect, FitContext, FitRows, FittedModel, ModelFamily, PredictRows } from './model.js';

export interface TrendRegressionState {
  intercept: number;
  /** Per step of time from t0. */
  trend: number;
  t0: number;
  /** Season length of the dummies (0: none) and each slot's effect, slot 0 the intercept's. */
  season: number;
  seasonal: number[];
  columns: number[];
  beta: number[];
  /** Each driver's fitted effect per unit of the user's column. */
  effects: DriverEffect[];
}

const SPARE_ROWS = 4;
const slotOf = (t: number, s: number) => ((Math.round(t) % s) + s) % s;

function revive(state: TrendRegressionState): FittedModel<TrendRegressionState> {
  return {
    state,
    effects: () => state.effects,
    predict: (rows: PredictRows) =>
      rows.time.map((t, i) => {
        const x = rows.features[i] as number[];
        const season = state.season > 1 ? (state.seasonal[slotOf(t, state.season)] as number) : 0;
        return state.intercept + state.trend * (t - state.t0) + season + state.columns.reduce((s, j, k) => s + (state.beta[k] as number) * (x[j] ?? 0), 0);
      }),
    describe: () => `trend regression (least squares) on a trend${state.season > 1 ? `, ${state.season - 1} season dummies` : ''} and ${describeEffects(state.effects)}`,
  };
}

function fit(rows: FitRows, ctx: FitContext): FittedModel<TrendRegressionState> {
  const y = rows.target as number[];
  const n = y.length;
  const columns = driverColumns(rows.features);
  if (columns.length === 0) throw new Error('no known driver varies over the fit rows');
  const season = ctx.info.season > 1 && n >= 2 * ctx.info.season ? ctx.info.season : 0;
  const width = 2 + Math.max(0, season - 1) + columns.length;
  if (n < width + SPARE_ROWS) throw new Error(`too few rows for a trend and ${columns.length} drivers`);
  const t0 = rows.time[0] as number;
  const design: Float64Array[] = [new Float64Array(n).fill(1), Float64Array.from(rows.time, (t) => t - t0)];
  for (let k = 1; k < season; k++) design.push(Float64Array.from(rows.time, (t) => (slotOf(t, season) === k ? 1 : 0)));
  for (const j of columns) design.push(Float64Array.from(rows.features, (r) => r[j] as number));
  const fitted = leastSquares(design, Float64Array.from(y));
  if (!fitted || fitted.beta.some((b) => !Number.isFinite(b))) throw new Error('the drivers are collinear with the trend or the season');
  ctx.progress(1);
  const b = fitted.beta;
  const seasonal = season > 1 ? [0, ...b.slice(2, 1 + season)] : [];
  const beta = b.slice(2 + Math.max(0, season - 1));
  return revive({ intercept: b[0] as number, trend: b[1] as number, t0, season, seasonal, columns, beta, effects: effectsOf(columns, beta, ctx) });
}

export const trendRegressionFamily: ModelFamily<TrendRegressionState> = {
  name: 'trend_regression',
  kind: 'numeric',
  traits: { readsDrivers: true, panelCost: 'cheap' },
  applies: (info, n) => info.timeOrdered && n >= 8,
  cost: (_info, n) => 1 + n / 20_000,
  fit,
  revive,
};
