/**
 * Seasonal ARIMA family ('sarima', numeric) through the `arima` npm package (ctsa compiled to
 * WebAssembly: exact maximum likelihood, L-BFGS; no native build).
 *
 * Three modules below this one: the order search (auto.arima's, sarima-search.ts), the package adapter
 * (sarima-fit.ts) and the closed forms (the time grid, the forecast of a model without AR or MA terms:
 * closed-forms.ts).
 *
 * The fitted history is the last max(10 * season, 600) steps of the series, put on the full integer time
 * grid with gaps filled by linear interpolation, so a 100k-row upload fits as fast as a 600-row one.
 *
 * Exogenous features (FitRows.features) are ignored: the linear family covers covariates, and the
 * package's SARIMAX regression would need the future rows' covariates at every horizon (it has them) but
 * made backtests slower and no better on the benchmark series; the only regressor used is the drift term.
 *
 * The package exposes neither its coefficients nor its one-step in-sample predictions. So `state` keeps the
 * chosen orders and the (capped) series and revive() refits the same orders on the same numbers: the WASM
 * optimiser is deterministic, so the forecasts are identical. Rows at or before the last fit time get the
 * stored series value at that time (the observed, or interpolated, value: the best one-step value we can
 * give without the package's residuals).
 */
import { toGrid } from '../stats/closed-forms.js';
import { MAX_SEASON } from '../stats/stationarity.js';
import type { FitContext, FitRows, FittedModel, ModelFamily, PredictRows, SeriesInfo } from './model.js';
import { fitOnce, forecastOnce, noiseOnly, noiseOnlyForecast, type ArimaInstance, type SarimaOrders } from './sarima-fit.js';
import { MAX_BACKTEST_FITS, MAX_FITS, selectOrders } from './sarima-search.js';

/** Fitted history: at least this many steps (or 10 seasons when longer). */
const MIN_HISTORY = 600;

export interface SarimaState {
  version: 1;
  orders: SarimaOrders;
  /** Time of series[0] on the engine's time axis; series[i] is at time start + i. */
  start: number;
  /** The fitted history on the full integer grid (gaps interpolated), capped to the last N steps. */
  series: number[];
  /** AIC of the chosen model (informational), null for the constant-series shortcut. */
  aic: number | null;
  /** The series was constant: forecasts are that constant, no ARIMA fitted. */
  constant: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// The fitted model.

export function describeOrders(o: SarimaOrders): string {
  const ns = `(${o.p},${o.d},${o.q})`;
  const seasonal = o.s > 0 && o.P + o.D + o.Q > 0 ? `(${o.P},${o.D},${o.Q})${o.s}` : '';
  return `SARIMA${ns}${seasonal}${o.trendingDrift ? ' with a trending drift' : o.drift ? ' with drift' : ''}`;
}

/** Frees a fitted model's WASM memory once its FittedModel is garbage collected (backtest fits are many). */
const released = new FinalizationRegistry<{ model?: ArimaInstance }>((holder) => holder.model?.destroy());

function makeFitted(state: SarimaState, fittedModel?: ArimaInstance): FittedModel<SarimaState> {
  const n = state.series.length;
  const lastTime = state.start + n - 1;
  const holder: { model?: ArimaInstance } = { model: fittedModel };
  let cache: number[] = [];

  const ensureForecast = (steps: number): number[] => {
    if (cache.length >= steps) return cache;
    if (state.constant) {
      cache = new Array<number>(steps).fill(state.series[n - 1]!);
      return cache;
    }
    if (noiseOnly(state.orders)) {
      cache = noiseOnlyForecast(state.series, state.orders, steps);
      return cache;
    }
    if (!holder.model) {
      const outcome = fitOnce(state.series, state.orders);
      if (!Number.isFinite(outcome.aic)) {
        outcome.model.destroy();
        throw new Error(`sarima: refitting ${describeOrders(state.orders)} failed (${outcome.message || 'no AIC'})`);
      }
      holder.model = outcome.model;
    }
    const values = forecastOnce(holder.model, state.orders, n, steps);
    if (values.length < steps || values.some((v) => !Number.isFinite(v))) {
      throw new Error(`sarima: ${describeOrders(state.orders)} produced non-finite forecasts`);
    }
    cache = values;
    return cache;
  };

  const fitted: FittedModel<SarimaState> = {
    state,
    describe: () => (state.constant ? 'SARIMA(0,0,0) on a constant series' : describeOrders(state.orders)),
    predict(rows: PredictRows): number[] {
      let maxStep = 0;
      for (const t of rows.time) maxStep = Math.max(maxStep, Math.round(t) - lastTime);
      const ahead = maxStep > 0 ? ensureForecast(maxStep) : [];
      return rows.time.map((time) => {
        const t = Math.round(time);
        if (t > lastTime) return ahead[t - lastTime - 1]!;
        // In-sample: the stored value (the package exposes no one-step fitted values); before the stored
        // history, its first value.
        return state.series[Math.max(0, t - state.start)]!;
      });
    },
  };
  released.register(fitted, holder);
  return fitted;
}

/**
 * Ten seasons of history when the season is modelled; a season longer than MAX_SEASON is not, so its ten
 * seasons (2,880 five-minute steps) would only slow the non-seasonal search, and crashed the package's
 * memory on 100,000 rows.
 */
const historyCap = (season: number) => (season >= 2 && season <= MAX_SEASON ? Math.max(10 * season, MIN_HISTORY) : MIN_HISTORY);

function fitSarima(rows: FitRows, ctx: FitContext): FittedModel<SarimaState> {
  const target = rows.target as number[];
  if (target.length !== rows.time.length) throw new Error('sarima: time and target lengths differ');
  if (target.some((v) => typeof v !== 'number' || !Number.isFinite(v))) throw new Error('sarima: the target has non-numeric values');
  for (let i = 1; i < rows.time.length; i++) {
    if (!(rows.time[i]! > rows.time[i - 1]!)) throw new Error('sarima: time must be strictly increasing');
  }
  const season = ctx.info.season;
  const cap = historyCap(season);
  const { start, series } = toGrid(rows.time.map(Math.round), target, cap);
  const first = series[0]!;
  if (series.every((v) => v === first)) {
    ctx.progress(1);
    const orders: SarimaOrders = { p: 0, d: 0, q: 0, P: 0, D: 0, Q: 0, s: 0, drift: false };
    return makeFitted({ version: 1, orders, start, series, aic: null, constant: true });
  }
  const best = selectOrders(series, season, ctx);
  ctx.progress(1);
  return makeFitted({ version: 1, orders: best.orders, start, series, aic: best.aic, constant: false }, best.model);
}

export const sarimaFamily: ModelFamily<SarimaState> = {
  name: 'sarima',
  kind: 'numeric',
  applies(info: SeriesInfo, rows: number): boolean {
    if (!info.timeOrdered) return false;
    const seasonal = info.season >= 2 && info.season <= MAX_SEASON;
    return rows >= 16 && (!seasonal || rows >= 2 * info.season + 8);
  },
  cost(info: SeriesInfo, rows: number, final?: boolean): number {
    // Up to MAX_FITS likelihood fits on at most max(10 s, 600) steps; a seasonal state space grows with s.
    const n = Math.min(rows, historyCap(info.season));
    const seasonal = info.season >= 2 && info.season <= MAX_SEASON ? 1 + info.season / 12 : 1;
    return Math.max(5, Math.round(((final === false ? MAX_BACKTEST_FITS : MAX_FITS) * n * seasonal) / 100));
  },
  fit: fitSarima,
  revive(state: SarimaState): FittedModel<SarimaState> {
    if (state.version !== 1 || !Array.isArray(state.series) || state.series.length === 0) {
      throw new Error('sarima: unsupported stored state');
    }
    return makeFitted(state);
  },
};
