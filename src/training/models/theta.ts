/**
 * The Theta method ('theta', numeric), winner of the M3 competition, in the form of Hyndman and
 * Billah (2003) that statsmodels' ThetaModel and StatsForecast's standard Theta fit:
 *  1. Seasonality test (the M3/M4 one): with r_k the autocorrelations, the series is seasonal when
 *     |r_m| > 1.645 sqrt((1 + 2 sum_{k<m} r_k^2) / n) (90%), the season m is 2..MAX_TESTED_SEASON and at least two
 *     seasons are there. A seasonal series is divided by the seasonal indices of a classical multiplicative
 *     decomposition (centred moving average of the season's length; indices normalised to mean 1), or, when
 *     a value is not positive, has the additive indices subtracted.
 *  2. Simple exponential smoothing (ETS(A,N,N), alpha and the initial level by least squares, ets.ts) on the
 *     adjusted series, plus a drift of half the slope b0 of its least-squares line (theta = 2):
 *       forecast(h) = level + b0 / 2 * (h - 1 + 1/alpha - (1 - alpha)^n / alpha),
 *     then the season put back.
 * Rows at or before the last fitted time get the one-step fitted value, reseasonalised.
 */
import { fitEts, MAX_HISTORY as ETS_HISTORY, type EtsState } from './ets.js';
import type { FitContext, FitRows, FittedModel, ModelFamily, PredictRows } from './model.js';
import { gridOf, lineThrough } from '../stats/closed-forms.js';
import { isSeasonal } from '../stats/stationarity.js';

/** Rows a Theta fit needs: its SES and line (the drift) on five, as ETS's simplest form (ets.ts MIN_ROWS). */
const MIN_ROWS = 5;

export interface ThetaState {
  version: 1;
  ses: EtsState;
  /** Slope of the adjusted series' least-squares line (per step). */
  b0: number;
  /** Observations the SES saw (n in the drift's formula). */
  n: number;
  season: number;
  /** 'none' when the test found no season. */
  decomposition: 'none' | 'multiplicative' | 'additive';
  /** Seasonal index per slot (time mod season). */
  indices: number[];
}

const slotOf = (t: number, s: number) => ((Math.round(t) % s) + s) % s;

/** Classical decomposition's seasonal indices per slot (multiplicative: mean 1; additive: mean 0). */
export function seasonalIndices(y: number[], start: number, m: number, multiplicative: boolean): number[] {
  const n = y.length;
  const sums = new Array<number>(m).fill(0);
  const counts = new Array<number>(m).fill(0);
  const half = Math.floor(m / 2);
  for (let i = half; i + half < n; i++) {
    // Centred moving average: 2 x m for an even season, m for an odd one.
    let ma = 0;
    if (m % 2 === 0) {
      ma = ((y[i - half] as number) + (y[i + half] as number)) / 2;
      for (let j = i - half + 1; j < i + half; j++) ma += y[j] as number;
    } else {
      for (let j = i - half; j <= i + half; j++) ma += y[j] as number;
    }
    ma /= m;
    const k = slotOf(start + i, m);
    sums[k] = (sums[k] as number) + (multiplicative ? (y[i] as number) / ma : (y[i] as number) - ma);
    counts[k] = (counts[k] as number) + 1;
  }
  const raw = sums.map((s, k) => ((counts[k] as number) > 0 ? s / (counts[k] as number) : multiplicative ? 1 : 0));
  const centre = raw.reduce((a, b) => a + b, 0) / m;
  return raw.map((v) => (multiplicative ? v / centre : v - centre));
}

export function fitTheta(y: number[], start: number, season: number, progress: (share: number) => void = () => {}): ThetaState {
  const seasonal = isSeasonal(y, season);
  const decomposition = !seasonal ? 'none' : y.every((v) => v > 0) ? 'multiplicative' : 'additive';
  const indices = seasonal ? seasonalIndices(y, start, season, decomposition === 'multiplicative') : [];
  const adjusted = y.map((v, i) => {
    if (decomposition === 'none') return v;
    const index = indices[slotOf(start + i, season)] as number;
    return decomposition === 'multiplicative' ? v / index : v - index;
  });
  const ses = fitEts(adjusted, start, 1, [{ trend: 'none', seasonal: false }], progress);
  return { version: 1, ses, b0: lineThrough(adjusted).slope, n: adjusted.length, season: seasonal ? season : 1, decomposition, indices };
}

function reseasonalise(state: ThetaState, t: number, value: number): number {
  if (state.decomposition === 'none') return value;
  const index = state.indices[slotOf(t, state.season)] as number;
  return state.decomposition === 'multiplicative' ? value * index : value + index;
}

export function thetaForecast(state: ThetaState, h: number): number {
  const { alpha, level, lastTime } = state.ses;
  const drift = (state.b0 / 2) * (h - 1 + 1 / alpha - (1 - alpha) ** state.n / alpha);
  return reseasonalise(state, lastTime + h, level + drift);
}

function revive(state: ThetaState): FittedModel<ThetaState> {
  return {
    state,
    describe: () =>
      `Theta method (SES, alpha ${state.ses.alpha.toFixed(2)}, with half the trend's slope as drift${state.decomposition === 'none' ? '' : `; ${state.decomposition} season ${state.season}`})`,
    predict(rows: PredictRows): number[] {
      return rows.time.map((time) => {
        const t = Math.round(time);
        if (t > state.ses.lastTime) return thetaForecast(state, t - state.ses.lastTime);
        return reseasonalise(state, t, state.ses.fitted[Math.max(0, t - state.ses.start)] as number);
      });
    },
  };
}

export const thetaFamily: ModelFamily<ThetaState> = {
  name: 'theta',
  kind: 'numeric',
  traits: { panelCost: 'cheap' },
  applies: (info, n) => info.timeOrdered && n >= MIN_ROWS,
  cost: (_info, n) => Math.max(1, Math.round(Math.min(n, 2000) / 200)),
  fit(rows: FitRows, ctx: FitContext) {
    const { start, series } = gridOf(rows, 'theta', ETS_HISTORY);
    return revive(fitTheta(series, start, ctx.info.season, (share) => ctx.progress(share)));
  },
  revive(state) {
    if (state.version !== 1) throw new Error('theta: unsupported stored state');
    return revive(state);
  },
};
