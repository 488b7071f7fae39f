/**
 * MSTL ('mstl', numeric): the multiple-season decomposition of Bandara, Hyndman and Bergmeir (2021),
 * as R's forecast::mstl and stlf forecast with it, for data with long or several seasons (half-hourly
 * [48, 336], hourly [24, 168], daily [7, 365]) where the single-season families stop at 60 steps.
 *  1. The fit rows on the integer grid (gaps interpolated), at most MAX_HISTORY steps.
 *  2. One STL (stl.ts) per period, shortest first and longest last, each on the series less the other
 *     seasons; the whole round done ITERATIONS times so each season is re-estimated once the others are out.
 *     Seasonal windows 11, 15, 19, ... cycles (mstl's 7 + 4i), the rest STL's defaults.
 *  3. ETS (ets.ts, the non-seasonal forms by AICc) on the last TREND_HISTORY steps of the seasonally
 *     adjusted series (trend + remainder): the seasons are out, so only level and trend are left to model.
 *  4. Forecast = the ETS forecast + each seasonal component's last cycle repeated (mstl's seasonal naive).
 * Exogenous features are ignored, as R's stlf: the harmonic and linear families carry covariates.
 * Rows at or before the last fitted time get the ETS one-step value plus the estimated seasons at that time
 * (stored for the last TREND_HISTORY steps; earlier rows get the first stored value, as ETS's).
 *
 * R's package was not used as a dependency (none in JavaScript keeps a decomposition one could store);
 * @bsull/augurs's MSTL exposes no state to revive, so it only serves the unit test as a reference.
 */
import { gridOf } from '../stats/closed-forms.js';
import { etsForecast, fitEts, formsFor, describeEts, type EtsState } from './ets.js';
import { hasLongSeason, type FitContext, type FitRows, type FittedModel, type ModelFamily, type PredictRows, type SeriesInfo } from './model.js';
import { stl } from './stl.js';

/** The engine keeps at most 100,000 known rows; STL is O(n), so the whole history is decomposed. */
const MAX_HISTORY = 100_000;
/** Steps of the seasonally adjusted series the ETS sees (ets.ts's own cap). */
const TREND_HISTORY = 2000;
const ITERATIONS = 2;
const MIN_ROWS = 8;

export interface MstlState {
  version: 1;
  /** Integer periods decomposed, ascending. */
  periods: number[];
  /** Per period, its seasonal component over the last cycle: cycles[i][k] is the value at lastTime - p + 1 + k. */
  cycles: number[][];
  /** ETS of the seasonally adjusted series (its own in-sample values dropped: `fitted` holds the whole one). */
  trend: EtsState;
  lastTime: number;
  /** Time of fitted[0]. */
  start: number;
  /** One-step in-sample values (ETS one-step + seasons) for the last steps. */
  fitted: number[];
}

/** The periods this many steps can decompose: rounded to whole steps, each with two full cycles. */
export function periodsFor(periods: number[], steps: number): number[] {
  const rounded = periods.map(Math.round).filter((p) => p >= 2 && 2 * p <= steps);
  return [...new Set(rounded)].sort((a, b) => a - b);
}

export interface Decomposition {
  seasonals: Float64Array[];
  /** The series less every seasonal component. */
  adjusted: Float64Array;
}

/** The MSTL decomposition of a regular series (position 0 is a cycle start for every period). */
export function mstlDecompose(y: ArrayLike<number>, periods: number[], progress: (share: number) => void = () => {}): Decomposition {
  const adjusted = Float64Array.from(y);
  const seasonals: Float64Array[] = periods.map(() => new Float64Array(y.length));
  const fits = ITERATIONS * periods.length;
  for (let round = 0, done = 0; round < ITERATIONS; round++) {
    periods.forEach((period, i) => {
      const seasonal = seasonals[i]!;
      for (let t = 0; t < adjusted.length; t++) adjusted[t]! += seasonal[t]!;
      const fit = stl(adjusted, { period, seasonal: 7 + 4 * (i + 1) });
      seasonals[i] = fit.seasonal;
      for (let t = 0; t < adjusted.length; t++) adjusted[t]! -= fit.seasonal[t]!;
      progress(++done / fits);
    });
  }
  return { seasonals, adjusted };
}

export function fitMstl(y: number[], start: number, periodsWanted: number[], progress: (share: number) => void = () => {}): MstlState {
  const periods = periodsFor(periodsWanted, y.length);
  if (periods.length === 0) throw new Error('mstl: no season with two full cycles in the rows');
  const n = y.length;
  const { seasonals, adjusted } = mstlDecompose(y, periods, (share) => progress(0.5 * share));
  const from = Math.max(0, n - TREND_HISTORY);
  const tail = Array.from(adjusted.subarray(from));
  const trend = fitEts(tail, start + from, 1, formsFor({ season: 1 }, tail.length), (share) => progress(0.5 + 0.5 * share));
  const fitted = trend.fitted.map((v, i) => seasonals.reduce((sum, s) => sum + s[from + i]!, v));
  return {
    version: 1,
    periods,
    cycles: periods.map((p, i) => Array.from(seasonals[i]!.subarray(n - p))),
    trend: { ...trend, fitted: [] },
    lastTime: start + n - 1,
    start: start + from,
    fitted,
  };
}

/** The seasons' sum at time t from their last cycles (t after the fit: the seasonal naive of each). */
function seasonsAt(state: MstlState, t: number): number {
  let sum = 0;
  state.periods.forEach((p, i) => {
    const k = (((t - (state.lastTime - p + 1)) % p) + p) % p;
    sum += state.cycles[i]![k]!;
  });
  return sum;
}

export function mstlForecast(state: MstlState, h: number): number {
  return etsForecast(state.trend, h) + seasonsAt(state, state.lastTime + h);
}

function revive(state: MstlState): FittedModel<MstlState> {
  return {
    state,
    describe: () => `MSTL (seasons ${state.periods.join(', ')}), seasonally adjusted series by ${describeEts(state.trend)}`,
    predict(rows: PredictRows): number[] {
      return rows.time.map((time) => {
        const t = Math.round(time);
        if (t > state.lastTime) return mstlForecast(state, t - state.lastTime);
        return state.fitted[Math.max(0, t - state.start)]!;
      });
    },
  };
}

const shortest = (info: SeriesInfo) => Math.min(...info.periods.map(Math.round));

export const mstlFamily: ModelFamily<MstlState> = {
  name: 'mstl',
  kind: 'numeric',
  // The early backtest windows of a long horizon may hold two cycles of the day but not of the week: the
  // fit then decomposes the periods it can (periodsFor), so the family is scored on every window instead of
  // sitting out (15-minute data a week ahead).
  applies: (info, n) => info.timeOrdered && hasLongSeason(info) && n >= Math.max(MIN_ROWS, 2 * shortest(info)),
  // The ETS's three forms on TREND_HISTORY steps weigh as ets's; two STLs per period are O(n) each (measured
  // about ets's fit on 4,000 half-hourly rows, 40x on 100,000 five-minute rows).
  cost: (info, n) => Math.max(2, Math.round((3 * Math.min(n, TREND_HISTORY)) / 200 + (info.periods.length * Math.min(n, MAX_HISTORY)) / 200)),
  fit(rows: FitRows, ctx: FitContext) {
    const { start, series } = gridOf(rows, 'mstl', MAX_HISTORY);
    return revive(fitMstl(series, start, ctx.info.periods, (share) => ctx.progress(share)));
  },
  revive(state) {
    if (state.version !== 1) throw new Error('mstl: unsupported stored state');
    return revive(state);
  },
};
