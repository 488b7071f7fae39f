/**
 * Seasonal ARIMA family ('sarima', numeric, issue 10) through the `arima` npm package (ctsa compiled to
 * WebAssembly: exact maximum likelihood, L-BFGS; no native build).
 *
 * Order selection follows Hyndman & Khandakar's auto.arima, restricted to small orders:
 *  - the seasonal difference D (0/1) from the seasonal strength of the series (STL-like, Fs > 0.64), only
 *    when the season is 2..MAX_SEASON and at least two seasons are there;
 *  - the difference d (0/1) from a KPSS level-stationarity test (5%) on the seasonally differenced series;
 *  - (p,q,P,Q) in {0,1,2}x{0,1,2}x{0,1}x{0,1} by auto.arima's stepwise search on its default criterion,
 *    AICc (only compared between models with the same d and D, as it must be; plain AIC was used before
 *    session 6 and measured worse, docs/benchmarks.md), at most MAX_FITS fits (and one for the trending
 *    drift below). The start models are auto.arima's except its (2,d,2)(1,D,1), replaced by (1,d,1)(0,D,1):
 *    that one fit alone can take 10 s on 600 steps, and the stepwise moves still reach it when it is better;
 *  - a drift (the exogenous regressor `t`, which the package differences with the series) when d+D = 1, so a
 *    trend is extrapolated; with d+D = 0 the package fits a mean; with d+D = 2 neither makes sense;
 *  - then, for the chosen orders with a drift, a drift that itself trends (regressors t and t^2: a linear
 *    trend in the differences, statsmodels' trend='t' with d = 1, or trend='ct' before differencing), kept
 *    only when a likelihood-ratio test finds it at the 5% level, as the KPSS test decides d. AIC alone (any
 *    gain) was measured and rejected: it took the term on 10 of 58 real series and made 6 of them worse
 *    (unemployment's 2000-2009 crisis onset read as an acceleration); the 5% test takes it on 3 (global
 *    temperature since 1880, two infant mortality rates), all better (docs/benchmarks.md, session 6).
 * The package's own auto mode was tried and rejected: on US nonfarm employment it picked a non-seasonal model
 * (MAE 299-410 against 180 for this search) and it is up to 6x slower on the CO2 series.
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
 *
 * The package writes to stdout when verbose and on some failures; we instantiate its WASM module ourselves
 * with `print`/`printErr` captured, which both silences it and gives us the AIC and the exit message of each
 * fit (verbose summary), the only way the package reports them.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import type { FitContext, FitRows, FittedModel, ModelFamily, PredictRows, SeriesInfo } from './model.js';

/** Largest season modelled with seasonal terms; longer ones (e.g. 365) make the state space huge. */
const MAX_SEASON = 60;
/** Fitted history: at least this many steps (or 10 seasons when longer). */
const MIN_HISTORY = 600;
/** Hard cap on the number of ARIMA fits during order selection. */
const MAX_FITS = 12;
/** Backtest fits only rank the family: a shorter stepwise search (the start models and two moves). */
const MAX_BACKTEST_FITS = 6;
const MAX_P = 2;
const MAX_Q = 2;
const MAX_SP = 1;
const MAX_SQ = 1;
/**
 * auto.arima's guard: a fit whose AR or MA polynomial has a root within this modulus of the unit circle is
 * not a candidate. Such a fit is a unit root the differencing did not take out (its forecasts run away, e.g.
 * AR1 + AR2 = 1.002 on US employment: +45,000 in a year) or an MA term that cannot be inverted.
 */
const MIN_ROOT_MODULUS = 1.01;
/**
 * AIC gain that the trending drift's one extra parameter must bring: the likelihood-ratio statistic
 * 2 * (logL1 - logL0) = AIC0 - AIC1 + 2 must exceed chi-square(1)'s 5% point, 3.841.
 */
const TRENDING_DRIFT_MIN_AIC_GAIN = 3.841 - 2;

export interface SarimaOrders {
  p: number;
  d: number;
  q: number;
  P: number;
  D: number;
  Q: number;
  /** Season used by the seasonal terms; 0 when the model is not seasonal. */
  s: number;
  /** Drift regressor (time index) included. */
  drift: boolean;
  /**
   * The drift trends too (regressors t and t^2/n, n the fitted length: the differenced series' mean moves
   * linearly with time). Absent in models stored before it existed.
   */
  trendingDrift?: boolean;
}

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
// The WASM module, instantiated once per thread with its output captured.

/** The package's options: the orders (the drift is our exogenous regressor, not an option) and the fit method. */
interface ArimaOptions extends Omit<SarimaOrders, 'drift' | 'trendingDrift'> {
  transpose?: boolean;
  method?: number;
  optimizer?: number;
  verbose?: boolean;
}
interface ArimaInstance {
  train(ts: number[], exog?: number[] | number[][]): ArimaInstance;
  predict(length: number, exog?: number[] | number[][]): [number[], number[]];
  destroy(): void;
}
type ArimaConstructor = new (options: ArimaOptions) => ArimaInstance;

interface ArimaRuntime {
  ARIMA: ArimaConstructor;
  /** Lines printed by the module since the last drain. */
  drain(): string[];
}

let runtime: ArimaRuntime | undefined;

function arimaRuntime(): ArimaRuntime {
  if (runtime) return runtime;
  const require = createRequire(import.meta.url);
  // The package's index.js builds its module with console output; its parts are plain files we can load
  // ourselves (the package's `exports` map hides them from bare subpath requires, not from absolute paths).
  const dir = path.dirname(require.resolve('arima'));
  const makeModule = require(path.join(dir, 'wasm', 'native-sync.js')) as (opts: Record<string, unknown>) => unknown;
  const wasmBinary = require(path.join(dir, 'wrapper', 'native.bin.js')) as unknown;
  const load = require(path.join(dir, 'load.js')) as (module: unknown) => ArimaConstructor;
  let lines: string[] = [];
  const capture = (text: unknown): void => {
    lines.push(String(text));
    if (lines.length > 10_000) lines = lines.slice(-1000);
  };
  const module = makeModule({ wasmBinary, print: capture, printErr: capture });
  runtime = {
    ARIMA: load(module),
    drain() {
      const out = lines;
      lines = [];
      return out;
    },
  };
  return runtime;
}

export interface FitOutcome {
  model: ArimaInstance;
  aic: number;
  ok: boolean;
  message: string;
  /** Smallest root modulus of the fitted AR/MA polynomials (minRootModulus). */
  roots: number;
}

export function fitOnce(series: number[], o: SarimaOrders): FitOutcome {
  const rt = arimaRuntime();
  rt.drain();
  // The drift goes in as a regressor, not as a package option.
  const { drift: _drift, trendingDrift, ...orders } = o;
  // Two regressors go in as one row per step (the package's `transpose`).
  const model = new rt.ARIMA({ ...orders, method: 0, optimizer: 6, verbose: true, transpose: trendingDrift === true });
  try {
    const exog = regressors(o, 0, series.length, series.length);
    if (exog) model.train(series, exog);
    else model.train(series);
  } catch (error) {
    model.destroy();
    rt.drain();
    throw error;
  }
  const out = rt.drain();
  const aicLine = out.find((l) => l.includes('AIC criterion'));
  const aic = aicLine ? Number(aicLine.split(':')[1]) : Number.NaN;
  const exit = out.find((l) => l.includes('Exit Message')) ?? '';
  const message = exit.split(':').slice(1).join(':').trim();
  // ctsa flags non-stationary / non-invertible fits and input errors in its exit message, but not roots
  // next to the unit circle: those are checked on the coefficients of its summary.
  const roots = minRootModulus(coefficientsOf(out), o.s);
  const ok = Number.isFinite(aic) && !/nonstationary|error|fail/i.test(message) && roots >= MIN_ROOT_MODULUS;
  return { model, aic, ok, message, roots };
}

type Coefficients = Record<'AR' | 'MA' | 'SAR' | 'SMA', number[]>;

/** The AR/MA coefficients of the package's verbose summary ("AR1   0.28   0.07"), in lag order. */
export function coefficientsOf(lines: string[]): Coefficients {
  const out: Coefficients = { AR: [], MA: [], SAR: [], SMA: [] };
  for (const line of lines) {
    const match = /^\s*(AR|MA|SAR|SMA)(\d+)\s+(\S+)/.exec(line);
    if (match) out[match[1] as keyof Coefficients][Number(match[2]) - 1] = Number(match[3]);
  }
  return out;
}

/**
 * Smallest modulus of the roots of the model's polynomials, each 1 - c1 z^l - ... - ck z^(kl) (the package
 * writes both AR and MA terms with a minus, Box-Jenkins style; a fitted MA(1) of e_t + 0.6 e_t-1 reads
 * MA1 = -0.6). The roots in w = z^l are the reciprocals of the companion matrix's eigenvalues, and |z| =
 * |w|^(1/l). NaN coefficients (a failed fit) count as a root on the circle.
 */
export function minRootModulus(c: Coefficients, season: number): number {
  let min = Number.POSITIVE_INFINITY;
  const check = (coefs: number[], lag: number) => {
    const k = coefs.length;
    if (k === 0) return;
    if (coefs.some((v) => !Number.isFinite(v))) {
      min = Math.min(min, 1);
      return;
    }
    const companion = Matrix.zeros(k, k);
    coefs.forEach((v, i) => companion.set(0, i, v));
    for (let i = 1; i < k; i++) companion.set(i, i - 1, 1);
    const eig = new EigenvalueDecomposition(companion);
    eig.realEigenvalues.forEach((re, i) => {
      const modulus = Math.hypot(re, eig.imaginaryEigenvalues[i]!);
      min = Math.min(min, modulus > 0 ? (1 / modulus) ** (1 / lag) : Number.POSITIVE_INFINITY);
    });
  };
  check(c.AR, 1);
  check(c.MA, 1);
  check(c.SAR, Math.max(1, season));
  check(c.SMA, Math.max(1, season));
  return min;
}

const noiseOnly = (o: SarimaOrders) => o.p + o.q + o.P + o.Q === 0;

/**
 * The exogenous regressors at steps from..from+count-1 of a history n steps long: t for a drift, [t, t^2/n]
 * for a trending drift, none otherwise. The fit and the forecast both take them from here.
 */
function regressors(o: SarimaOrders, from: number, count: number, n: number): number[] | number[][] | undefined {
  if (o.trendingDrift) return Array.from({ length: count }, (_, i) => [from + i, ((from + i) * (from + i)) / n]);
  if (o.drift) return Array.from({ length: count }, (_, i) => from + i);
  return undefined;
}

function forecast(model: ArimaInstance, o: SarimaOrders, n: number, steps: number): number[] {
  const rt = arimaRuntime();
  const [values] = model.predict(steps, regressors(o, n, steps, n));
  rt.drain();
  return values;
}

/**
 * Forecasts of a model without AR or MA terms, (1-B)^d (1-B^s)^D y_t = c + e_t: the package fits these but
 * forecasts them without the series' level (zeros, or the drift line through the origin: a test shows it),
 * so they are computed here. c is the mean of the differenced series when the model has a drift (or a mean,
 * d+D = 0), the least-squares line through it when the drift trends, and 0 otherwise; future noise is 0.
 */
function noiseOnlyForecast(series: number[], o: SarimaOrders, steps: number): number[] {
  let poly = [1];
  const times = (factor: number[]) => {
    const out = new Array<number>(poly.length + factor.length - 1).fill(0);
    poly.forEach((a, i) => factor.forEach((b, j) => (out[i + j] = out[i + j]! + a * b)));
    poly = out;
  };
  for (let k = 0; k < o.d; k++) times([1, -1]);
  if (o.s > 0) for (let k = 0; k < o.D; k++) times([1, ...new Array<number>(o.s - 1).fill(0), -1]);
  const order = poly.length - 1;
  let differenced = series;
  for (let k = 0; k < o.d; k++) differenced = diff(differenced, 1);
  if (o.s > 0) for (let k = 0; k < o.D; k++) differenced = diff(differenced, o.s);
  const c = (o.drift || order === 0) && differenced.length > 0 ? mean(differenced) : 0;
  // The differenced value at step t of the series is differenced[t - order].
  const drift = o.trendingDrift ? lineThrough(differenced) : { at: () => c };
  const values = [...series];
  for (let k = 0; k < steps; k++) {
    const t = values.length;
    let next = drift.at(t - order);
    for (let j = 1; j <= order; j++) next -= poly[j]! * values[t - j]!;
    values.push(next);
  }
  return values.slice(series.length);
}

// ---------------------------------------------------------------------------------------------------------
// Series preparation and unit-root / seasonality heuristics.

/** Puts the rows on the full integer grid (linear interpolation across gaps) and keeps the last `cap` steps. */
export function toGrid(time: number[], target: number[], cap: number): { start: number; series: number[] } {
  if (time.length !== target.length || time.length === 0) throw new Error('sarima: no rows to fit');
  const first = time[0]!;
  const last = time[time.length - 1]!;
  const start = Math.max(first, last - cap + 1);
  const series: number[] = [];
  // Find the first row at or after `start`'s left neighbour.
  let i = 0;
  while (i + 1 < time.length && time[i + 1]! <= start) i++;
  for (let t = start; t <= last; t++) {
    while (i + 1 < time.length && time[i + 1]! <= t) i++;
    const t0 = time[i]!;
    const v0 = target[i]!;
    if (t0 === t || i + 1 >= time.length) {
      series.push(v0);
    } else {
      const t1 = time[i + 1]!;
      const v1 = target[i + 1]!;
      series.push(v0 + ((v1 - v0) * (t - t0)) / (t1 - t0));
    }
  }
  return { start, series };
}

function diff(x: number[], lag: number): number[] {
  const out: number[] = [];
  for (let i = lag; i < x.length; i++) out.push(x[i]! - x[i - lag]!);
  return out;
}

function mean(x: number[]): number {
  let s = 0;
  for (const v of x) s += v;
  return s / x.length;
}

/** The least-squares line through (i, x[i]); also the ETS and Theta families' starting slope. */
export function lineThrough(x: number[]): { slope: number; at: (i: number) => number } {
  const mx = (x.length - 1) / 2;
  const my = mean(x);
  let sxy = 0;
  let sxx = 0;
  x.forEach((v, i) => {
    sxy += (i - mx) * (v - my);
    sxx += (i - mx) ** 2;
  });
  const slope = sxx > 0 ? sxy / sxx : 0;
  return { slope, at: (i) => my + slope * (i - mx) };
}

function variance(x: number[]): number {
  const m = mean(x);
  let s = 0;
  for (const v of x) s += (v - m) ** 2;
  return s / x.length;
}

/** KPSS level-stationarity statistic (Bartlett long-run variance, lags trunc(3 sqrt(n) / 13) as R's tseries). */
export function kpss(x: number[]): number {
  const n = x.length;
  const m = mean(x);
  const e = x.map((v) => v - m);
  let cum = 0;
  let eta = 0;
  for (const v of e) {
    cum += v;
    eta += cum * cum;
  }
  eta /= n * n;
  const lags = Math.trunc((3 * Math.sqrt(n)) / 13);
  let s2 = 0;
  for (const v of e) s2 += v * v;
  s2 /= n;
  for (let k = 1; k <= lags; k++) {
    let c = 0;
    for (let t = k; t < n; t++) c += e[t]! * e[t - k]!;
    s2 += (2 * (1 - k / (lags + 1)) * c) / n;
  }
  return s2 > 0 ? eta / s2 : 0;
}
/** 5% critical value of the KPSS level test. */
const KPSS_CRITICAL = 0.463;

/**
 * Seasonal strength Fs = max(0, 1 - var(remainder) / var(season + remainder)) after removing a centred
 * moving-average trend (a cheap stand-in for STL's, as auto.arima uses with the threshold 0.64).
 */
export function seasonalStrength(x: number[], s: number): number {
  const n = x.length;
  if (n < 2 * s + 2) return 0;
  const half = Math.floor(s / 2);
  const detrended: number[] = new Array<number>(n).fill(Number.NaN);
  for (let t = half; t < n - half; t++) {
    let sum = 0;
    if (s % 2 === 0) {
      // 2 x s moving average.
      for (let k = -half; k <= half; k++) sum += (Math.abs(k) === half ? 0.5 : 1) * x[t + k]!;
      sum /= s;
    } else {
      for (let k = -half; k <= half; k++) sum += x[t + k]!;
      sum /= s;
    }
    detrended[t] = x[t]! - sum;
  }
  const sums = new Array<number>(s).fill(0);
  const counts = new Array<number>(s).fill(0);
  detrended.forEach((v, t) => {
    if (Number.isFinite(v)) {
      sums[t % s]! += v;
      counts[t % s]! += 1;
    }
  });
  const means = sums.map((v, k) => v / Math.max(1, counts[k]!));
  const centre = mean(means);
  const seasonPlusRemainder: number[] = [];
  const remainder: number[] = [];
  detrended.forEach((v, t) => {
    if (Number.isFinite(v)) {
      seasonPlusRemainder.push(v);
      remainder.push(v - (means[t % s]! - centre));
    }
  });
  const total = variance(seasonPlusRemainder);
  if (!(total > 0)) return 0;
  return Math.max(0, 1 - variance(remainder) / total);
}

/** Differencing orders (d, D) and the season actually modelled, auto.arima style. */
export function chooseDifferencing(series: number[], season: number): { d: number; D: number; s: number } {
  const s = season >= 2 && season <= MAX_SEASON && series.length >= 2 * season + 8 ? season : 0;
  let D = 0;
  // A seasonal difference needs three seasons (the package's own minimum for it, with d = 1).
  if (s > 0 && series.length >= 3 * s + 2 && seasonalStrength(series, s) > 0.64) D = 1;
  const afterSeasonal = D === 1 ? diff(series, s) : series;
  let d = 0;
  if (afterSeasonal.length >= 8 && variance(afterSeasonal) > 0 && kpss(afterSeasonal) > KPSS_CRITICAL) d = 1;
  return { d, D, s };
}

// ---------------------------------------------------------------------------------------------------------
// Order selection.

function key(o: SarimaOrders): string {
  return `${o.p},${o.q},${o.P},${o.Q}`;
}

function inBounds(o: SarimaOrders): boolean {
  return o.p >= 0 && o.q >= 0 && o.P >= 0 && o.Q >= 0 && o.p <= MAX_P && o.q <= MAX_Q && o.P <= MAX_SP && o.Q <= MAX_SQ;
}

/** auto.arima's stepwise neighbourhood: each order +-1, and p/q and P/Q together. */
function neighbours(o: SarimaOrders): SarimaOrders[] {
  const out: SarimaOrders[] = [];
  const moves: Array<[number, number, number, number]> = [
    [1, 0, 0, 0], [-1, 0, 0, 0], [0, 1, 0, 0], [0, -1, 0, 0],
    [1, 1, 0, 0], [-1, -1, 0, 0],
  ];
  if (o.s > 0) moves.push([0, 0, 1, 0], [0, 0, -1, 0], [0, 0, 0, 1], [0, 0, 0, -1], [0, 0, 1, 1], [0, 0, -1, -1]);
  for (const [dp, dq, dP, dQ] of moves) {
    const n = { ...o, p: o.p + dp, q: o.q + dq, P: o.P + dP, Q: o.Q + dQ };
    if (inBounds(n)) out.push(n);
  }
  return out;
}

interface Candidate {
  orders: SarimaOrders;
  aic: number;
  /** AICc, what the order search minimises. */
  aicc: number;
  /** The fitted instance of the best model so far (the others are destroyed at once). */
  model: ArimaInstance;
}

function minLength(o: SarimaOrders): number {
  // The package's own guard (train throws below it).
  return o.d + o.s * o.D + Math.max(o.p + o.q, 2 * o.s, 10);
}

/**
 * AICc as forecast::Arima computes it: the parameters are the ARMA coefficients, the drift or mean, and the
 * noise variance; the observations are those left after differencing.
 */
export function aiccOf(aic: number, o: SarimaOrders, steps: number): number {
  const parameters = o.p + o.q + o.P + o.Q + (o.drift || o.d + o.D === 0 ? 1 : 0) + (o.trendingDrift ? 1 : 0) + 1;
  const observations = steps - o.d - o.s * o.D;
  const room = observations - parameters - 1;
  return room > 0 ? aic + (2 * parameters * (parameters + 1)) / room : Number.POSITIVE_INFINITY;
}

function selectOrders(series: number[], season: number, ctx: FitContext): Candidate {
  const { d, D, s } = chooseDifferencing(series, season);
  const base: SarimaOrders = { p: 0, d, q: 0, P: 0, D: s > 0 ? D : 0, Q: 0, s, drift: d + (s > 0 ? D : 0) === 1 };
  const starts: SarimaOrders[] =
    s > 0
      ? [
          { ...base },
          { ...base, p: 1, P: 1 },
          { ...base, q: 1, Q: 1 },
          { ...base, p: 1, q: 1, Q: 1 },
        ]
      : [{ ...base }, { ...base, p: 1 }, { ...base, q: 1 }, { ...base, p: 2, q: 2 }];
  const tried = new Map<string, number>();
  let best: Candidate | undefined;
  let fits = 0;
  const maxFits = ctx.final === false ? MAX_BACKTEST_FITS : MAX_FITS;
  const consider = (o: SarimaOrders): boolean => {
    const k = key(o);
    if (tried.has(k) || fits >= maxFits) return false;
    if (series.length < minLength(o)) {
      tried.set(k, Number.POSITIVE_INFINITY);
      return false;
    }
    fits++;
    let outcome: FitOutcome | undefined;
    try {
      outcome = fitOnce(series, o);
    } catch {
      // A fit the package refuses is simply not a candidate.
    }
    const aicc = outcome?.ok ? aiccOf(outcome.aic, o, series.length) : Number.POSITIVE_INFINITY;
    tried.set(k, aicc);
    ctx.progress(Math.min(0.95, fits / maxFits));
    // Ties go to the model tried first (the simpler start models come early), keeping the search deterministic.
    if (outcome && Number.isFinite(aicc) && (!best || aicc < best.aicc - 1e-9)) {
      best?.model.destroy();
      best = { orders: o, aic: outcome.aic, aicc, model: outcome.model };
      return true;
    }
    outcome?.model.destroy();
    return false;
  };
  for (const o of starts) consider(o);
  let improved = best !== undefined;
  while (improved && fits < maxFits) {
    improved = false;
    for (const n of neighbours(best!.orders)) {
      if (consider(n)) {
        improved = true;
        break;
      }
    }
  }
  if (!best) throw new Error(`sarima: no ARIMA model could be fitted (d=${d}, D=${D}, season=${s}, ${series.length} steps)`);
  return best.orders.drift ? withTrendingDrift(series, best) : best;
}

/** The chosen orders with a trending drift instead, when the likelihood-ratio test keeps it (one more fit). */
function withTrendingDrift(series: number[], best: Candidate): Candidate {
  const orders = { ...best.orders, trendingDrift: true };
  let outcome: FitOutcome | undefined;
  try {
    outcome = fitOnce(series, orders);
  } catch {
    return best;
  }
  if (!outcome.ok || !(best.aic - outcome.aic > TRENDING_DRIFT_MIN_AIC_GAIN)) {
    outcome.model.destroy();
    return best;
  }
  best.model.destroy();
  return { orders, aic: outcome.aic, aicc: aiccOf(outcome.aic, orders, series.length), model: outcome.model };
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
    const values = forecast(holder.model, state.orders, n, steps);
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

function fitSarima(rows: FitRows, ctx: FitContext): FittedModel<SarimaState> {
  const target = rows.target as number[];
  if (target.length !== rows.time.length) throw new Error('sarima: time and target lengths differ');
  if (target.some((v) => typeof v !== 'number' || !Number.isFinite(v))) throw new Error('sarima: the target has non-numeric values');
  for (let i = 1; i < rows.time.length; i++) {
    if (!(rows.time[i]! > rows.time[i - 1]!)) throw new Error('sarima: time must be strictly increasing');
  }
  const season = ctx.info.season;
  const cap = Math.max(10 * season, MIN_HISTORY);
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
    const n = Math.min(rows, Math.max(10 * info.season, MIN_HISTORY));
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
