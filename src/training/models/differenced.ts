/**
 * auto.arima's differencing alone ('differenced', numeric): ARIMA(0,d,0), the simplest model of
 * Hyndman & Khandakar's search, with d chosen as forecast::ndiffs chooses it: the KPSS level test (5%) on the
 * series, then on its first differences, at most twice (max.d = 2), on any series that is not constant (ndiffs
 * has no minimum length, and neither has this):
 *   d = 0  the series' mean (auto.arima's ARIMA(0,0,0) with non-zero mean);
 *   d = 1  a random walk from the last value, with a drift (the mean difference) where AICc prefers it to none,
 *          as auto.arima's allowdrift compares them;
 *   d = 2  the last value plus the last difference per step (ARIMA(0,2,0): the latest slope carried on).
 * No season, no AR or MA terms: each of the three forecasts is one the naive family or drift already makes, so
 * on one series alone the family adds nothing but one more candidate to rank by noise. What it adds is that d
 * is the series' own: where a panel chooses one structure across its series (selection.ts pooledStructure),
 * the structure "auto.arima's d" lets a level series keep its mean, a random walk its last value and an
 * accelerating one its slope, which no single naive family does. So it competes only in that choice
 * (selection.ts POOLED_ONLY): a series of a panel scores it, a series' own choice never takes it.
 * On the panels (docs/benchmarks.md, panels; estimated offline with a study now in git history at 1.391 ->
 * 1.354, then measured): the 13 panels' mean MASE 1.391 -> 1.345 (0.993x R's best per panel), US population by
 * age x sex 2.763 -> 2.524, US workers by occupation 4.649 -> 4.456 (below drift's 4.635), stocks 1.845 -> 1.686;
 * the validation panels 1.114 -> 1.099 (gapminder population 0.690 -> 0.568); no panel worse.
 * Gaps in the time axis are interpolated (closed-forms.ts toGrid), as SARIMA's and ETS's fits do.
 */
import type { FitRows, FittedModel, ModelFamily, PredictRows } from './model.js';
import { diff, gaussianAicc, mean, toGrid } from '../stats/closed-forms.js';
import { kpssDifferences } from '../stats/stationarity.js';

/** Fitted history: the last steps only, as ETS's. */
const MAX_HISTORY = 2000;
/** auto.arima's max.d. */

export interface DifferencedState {
  version: 1;
  d: number;
  /** d = 0: the mean; d = 1: the drift per step (0 without one); d = 2: the last difference. */
  slope: number;
  mean: number;
  last: number;
  lastTime: number;
  start: number;
  /** One-step fitted values on the grid (start .. lastTime). */
  fitted: number[];
}

/** AICc of a zero-mean (parameters 1: the variance) or drifting (2) Gaussian fit to the differences; none for a perfect fit. */
const aicc = (sse: number, n: number, parameters: number) => (sse > 0 ? gaussianAicc(sse, n, parameters) : Infinity);

function fit(rows: FitRows): DifferencedState {
  const { start, series } = toGrid(rows.time.map(Math.round), rows.target as number[], MAX_HISTORY);
  const n = series.length;
  const last = series[n - 1] as number;
  const d = n >= 3 ? kpssDifferences(series) : 0;
  const m = mean(series);
  let slope = 0;
  if (d === 1) {
    const dy = diff(series, 1);
    const drift = mean(dy);
    const none = dy.reduce((s, v) => s + v * v, 0);
    const withDrift = dy.reduce((s, v) => s + (v - drift) ** 2, 0);
    if (aicc(withDrift, dy.length, 2) < aicc(none, dy.length, 1)) slope = drift;
  } else if (d === 2) slope = last - (series[n - 2] as number);
  const fitted = series.map((_, t) => {
    if (d === 0 || t === 0) return d === 0 ? m : (series[0] as number);
    if (d === 1 || t === 1) return (series[t - 1] as number) + (d === 1 ? slope : 0);
    return 2 * (series[t - 1] as number) - (series[t - 2] as number);
  });
  return { version: 1, d, slope, mean: m, last, lastTime: start + n - 1, start, fitted };
}

function valueAt(state: DifferencedState, t: number): number {
  const time = Math.round(t);
  if (time <= state.lastTime) return state.fitted[Math.max(0, time - state.start)] as number;
  if (state.d === 0) return state.mean;
  return state.last + (time - state.lastTime) * state.slope;
}

function revive(state: DifferencedState): FittedModel<DifferencedState> {
  if (state.version !== 1 || !Array.isArray(state.fitted)) throw new Error('differenced: unsupported stored state');
  return {
    state,
    predict: (rows: PredictRows) => rows.time.map((t) => valueAt(state, t)),
    describe: () =>
      state.d === 0
        ? 'ARIMA(0,0,0) with mean, d by KPSS'
        : state.d === 1
          ? `ARIMA(0,1,0)${state.slope !== 0 ? ' with drift' : ''}, d by KPSS`
          : 'ARIMA(0,2,0), d by KPSS',
  };
}

export const differencedFamily: ModelFamily<DifferencedState> = {
  name: 'differenced',
  kind: 'numeric',
  traits: { tried: 'pooled', acrossSeriesOnly: true },
  applies: (info, n) => info.timeOrdered && n >= 2,
  cost: () => 1,
  fit: (rows) => revive(fit(rows)),
  revive,
};
