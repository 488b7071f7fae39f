/**
 * Dynamic harmonic regression ('harmonic', numeric): regression on Fourier terms of each seasonal
 * period with ARMA errors, the standard answer of Hyndman and Athanasopoulos (fpp, "dynamic harmonic
 * regression") for seasons too long for seasonal ARIMA or ETS (48 to 8,766 steps).
 *  1. Least squares on an intercept, a linear trend, sin/cos(2 pi k t / p) for k = 1..K_p of each period p
 *     with two full cycles in the fit rows, and the rows' exogenous features (already standardised). A
 *     harmonic whose frequency an earlier (shorter) period already has is left out (k = 7j of 168 is j of 24),
 *     as R's fourier() drops duplicate columns, and k < p / 2 (above it the terms alias). A ridge of 1e-9 n
 *     keeps the fit defined when a feature repeats a Fourier term (the engine's calendar terms can).
 *  2. K_p in 0..min(ceil(p / 2) - 1, MAX_HARMONICS), fewer on long series (GRAM_WORK), by AICc of the
 *     regression, greedily (chooseHarmonics). Every fit comes from one Gram matrix X'X of all the candidate
 *     columns, built in one pass over the rows, so the search costs a few small Cholesky solves. AICc
 *     assumes independent errors, so K is chosen twice: on ordinary least squares, then on the rows
 *     prewhitened by an AR(<= 3) of its residuals (feasible generalised least squares), whose coefficients
 *     are kept.
 *  3. ARMA(p, q) errors, p <= 3, q <= 2 by AICc, on the regression residuals put on the time grid (last
 *     ARMA_HISTORY steps), estimated by Hannan-Rissanen (stats/arma.ts): a long autoregression gives the
 *     innovations, then least squares on lagged residuals and lagged innovations. Closed form, JSON
 *     coefficients, O(n) per candidate. The sarima package adapter was not used: it exposes no coefficients, so a stored model would
 *     have to keep the series and refit on revive, and its likelihood search costs seconds on long series
 *     where this costs milliseconds. Orders whose AR part is not stationary or MA part not invertible are
 *     skipped, so the error forecast decays to zero.
 * The choice of K is by the regression's AICc before the errors are modelled (two steps, not auto.arima's
 * joint search): the joint search would need one ARMA fit per K.
 *
 * The fit uses the last HISTORY_CYCLES cycles of the longest period (at least MIN_HISTORY steps), as SARIMA
 * keeps the last ten seasons: on a year of hourly temperature normals the whole year's average day cost 1.6x the
 * MAE of the last ten weeks' (Seattle, a week ahead, 1.18 against 0.75).
 *
 * Forecast = regression at the row's time and features + the ARMA forecast of the error. Rows at or before
 * the last fitted time get the regression plus the ARMA's one-step value (stored for the last
 * IN_SAMPLE_STEPS steps; the regression alone before them).
 */
import { diff, gaussianAicc, gridOf } from '../stats/closed-forms.js';
import { armaPath, fitArma, innovationsOf, MAX_AR, MAX_MA } from '../stats/arma.js';
import { nestedRss, solveSubset, type GramSystem } from '../stats/least-squares.js';
import { chooseDifferencing } from '../stats/stationarity.js';
import { hasLongSeason, type FitContext, type FitRows, type FittedModel, type ModelFamily, type PredictRows } from './model.js';

const MAX_HARMONICS = 40;
/** Rows x columns^2 of one Gram matrix: fewer harmonics per period on long series (100k rows: 10 each of two). */
const GRAM_WORK = 2e8;
const ARMA_HISTORY = 10_000;
const IN_SAMPLE_STEPS = 2000;
const MIN_ROWS = 16;
/** Rows of the Gram matrix's pass between progress reports (about 20 ms each at 60 columns). */
const PROGRESS_ROWS = 8192;
/** History the regression sees: this many cycles of the longest period, at least MIN_HISTORY steps. */
const HISTORY_CYCLES = 10;
const MIN_HISTORY = 2000;
export interface HarmonicTerm {
  period: number;
  k: number;
}

export interface HarmonicState {
  version: 1;
  /** Periods used with their chosen K (K 0 = the season was not worth its terms). */
  periods: { period: number; harmonics: number }[];
  /** The Fourier terms in the order of their coefficients (sin then cos each). */
  terms: HarmonicTerm[];
  /** Trend column = (t - centre) / scale. */
  centre: number;
  scale: number;
  intercept: number;
  slope: number;
  fourier: number[];
  features: number[];
  /** 1 when the errors are integrated (ARIMA(p,1,q)): the ARMA models their differences. */
  d: number;
  ar: number[];
  ma: number[];
  /** The last error (d = 1 forecasts carry it on); 0 with d = 0. */
  lastLevel: number;
  /** Last MAX_AR (differenced when d = 1) errors and MAX_MA innovations on the grid, newest last. */
  lastErrors: number[];
  lastInnovations: number[];
  lastTime: number;
  /** Time of errorFitted[0]. */
  start: number;
  /** One-step ARMA value of the error per grid step. */
  errorFitted: number[];
  sigma2: number;
}

// ---------------------------------------------------------------------------------------------------------
// The regression.

/** Candidate Fourier terms per period (k < p/2, at most `cap`), without frequencies seen before. */
export function candidateTerms(periods: number[], cap = MAX_HARMONICS): HarmonicTerm[][] {
  const seen: number[] = [];
  return periods.map((period) => {
    const terms: HarmonicTerm[] = [];
    const most = Math.min(cap, Math.ceil(period / 2) - 1);
    for (let k = 1; k <= most; k++) {
      const frequency = k / period;
      if (seen.some((f) => Math.abs(f - frequency) < 1e-9)) continue;
      seen.push(frequency);
      terms.push({ period, k });
    }
    return terms;
  });
}

function rowOf(t: number, features: number[], centre: number, scale: number, terms: HarmonicTerm[], out: Float64Array): void {
  out[0] = 1;
  out[1] = (t - centre) / scale;
  let c = 2;
  for (const { period, k } of terms) {
    const angle = (2 * Math.PI * k * t) / period;
    out[c++] = Math.sin(angle);
    out[c++] = Math.cos(angle);
  }
  for (const f of features) out[c++] = f;
}

/**
 * X'X, X'y and y'y of the design, after the filter 1 - ar1 B - ar2 B^2 - ... on y and every column when `ar`
 * is not empty (prewhitening: least squares on the filtered rows is generalised least squares under AR errors).
 * Its columns: intercept, trend, 2 per Fourier term, features; its rows: those with `ar.length` consecutive
 * predecessors.
 */
function designOf(
  time: number[],
  features: number[][],
  y: Float64Array,
  centre: number,
  scale: number,
  terms: HarmonicTerm[],
  width: number,
  ar: number[],
  progress: (share: number) => void,
): GramSystem {
  const gram = new Float64Array(width * width);
  const cross = new Float64Array(width);
  const p = ar.length;
  // Ring of the last p + 1 rows (x, then y in the last slot).
  const ring = Array.from({ length: p + 1 }, () => new Float64Array(width + 1));
  const x = new Float64Array(width);
  let yy = 0;
  let used = 0;
  for (let i = 0; i < time.length; i++) {
    if (i % PROGRESS_ROWS === PROGRESS_ROWS - 1) progress(i / time.length);
    const slot = ring[i % (p + 1)]!;
    rowOf(time[i]!, features[i]!, centre, scale, terms, slot);
    slot[width] = y[i]!;
    if (i < p || time[i]! - time[i - p]! !== p) continue;
    for (let a = 0; a <= width; a++) {
      let v = slot[a]!;
      for (let j = 1; j <= p; j++) v -= ar[j - 1]! * ring[(i - j) % (p + 1)]![a]!;
      if (a < width) x[a] = v;
      else {
        yy += v * v;
        for (let b = 0; b < width; b++) cross[b]! += x[b]! * v;
      }
    }
    used++;
    for (let a = 0; a < width; a++) {
      const xa = x[a]!;
      if (xa === 0) continue;
      const row = a * width;
      for (let b = a; b < width; b++) gram[row + b]! += xa * x[b]!;
    }
  }
  for (let a = 0; a < width; a++) for (let b = 0; b < a; b++) gram[a * width + b] = gram[b * width + a]!;
  return { width, gram, cross, yy, rows: used };
}

const aicc = (n: number, rss: number, k: number) => gaussianAicc(rss, n, k);

/** The error's forecast 1..steps ahead: the ARMA's, cumulated from the last error when integrated. */
export function errorPath(state: HarmonicState, steps: number): number[] {
  const path = armaPath(state, steps);
  if (state.d === 0) return path;
  let level = state.lastLevel;
  return path.map((v) => (level += v));
}

// ---------------------------------------------------------------------------------------------------------
// The family.

/**
 * K per period by AICc on the design, greedily (the full grid is 41^periods fits): one period at a time with
 * the others fixed, shortest first, starting from K = 1, the K of lowest AICc over the period's whole range
 * (every K from one nested factorisation, nestedRss); passes repeat until one changes nothing. The whole
 * range, not fpp's walk up that stops at the first K that does not pay: a weekly pattern of weekdays lives in
 * harmonics near 7, 14, ... of 168, past K's that do not pay (flights per hour: K 5 with the walk, 1.7x the
 * MAE of K 35). The price: AICc sometimes takes a noise harmonic (2 of 6 seeds of a known signal got the true
 * K with it, 4 of 6 with the walk).
 */
function chooseHarmonics(design: GramSystem, perPeriod: HarmonicTerm[][], columnsOf: (ks: number[]) => number[], ridge: number): number[] {
  const n = design.rows;
  const ks = perPeriod.map((ts) => Math.min(1, ts.length));
  const scoreOf = (rss: number | undefined, k: number) => (rss === undefined || k + 2 >= n ? Infinity : aicc(n, rss, k + 1));
  let current = Infinity;
  for (let pass = 0, changed = true; changed && pass < 3; pass++) {
    changed = false;
    perPeriod.forEach((ts, i) => {
      // The other columns first, then this period's sin/cos pairs in order of k: prefix j of them is K = j / 2.
      const others = columnsOf(ks.map((k, j) => (j === i ? 0 : k)));
      const all = columnsOf(ks.map((k, j) => (j === i ? ts.length : k)));
      const own = all.filter((c) => !others.includes(c));
      const rss = nestedRss(design, [...others, ...own], ridge);
      const from = ks[i]!;
      current = scoreOf(rss[others.length + 2 * from - 1], others.length + 2 * from);
      for (let k = 0; k <= ts.length; k++) {
        const s = scoreOf(rss[others.length + 2 * k - 1], others.length + 2 * k);
        if (s < current - 1e-9) {
          current = s;
          ks[i] = k;
        }
      }
      if (ks[i] !== from) changed = true;
    });
  }
  return ks;
}

/**
 * The rows of the last HISTORY_CYCLES cycles of the longest period (at least MIN_HISTORY steps): a season's
 * shape drifts (a day of temperatures in December is not one in July), and fixed harmonics fitted on a year
 * of hours forecast the year's average day.
 */
function recentRows(rows: FitRows, periods: number[]): FitRows {
  const last = rows.time[rows.time.length - 1]!;
  const from = last - Math.max(MIN_HISTORY, HISTORY_CYCLES * Math.max(0, ...periods)) + 1;
  const first = rows.time.findIndex((t) => t >= from);
  if (first <= 0) return rows;
  return { time: rows.time.slice(first), features: rows.features.slice(first), target: rows.target.slice(first) };
}

export function fitHarmonic(allRows: FitRows, periodsWanted: number[], progress: (share: number) => void = () => {}): HarmonicState {
  const rows = recentRows(allRows, periodsWanted);
  const time = rows.time.map(Math.round);
  const target = (rows.target as unknown[]).map(Number);
  const n = time.length;
  const first = time[0]!;
  const last = time[n - 1]!;
  const span = last - first + 1;
  const periods = [...new Set(periodsWanted)].filter((p) => p >= 2 && 2 * p <= span).sort((a, b) => a - b);
  const width = rows.features[0]?.length ?? 0;
  const affordable = Math.floor((Math.sqrt(GRAM_WORK / n) - 2 - width) / 2 / Math.max(1, periods.length));
  const perPeriod = candidateTerms(periods, Math.max(1, Math.min(MAX_HARMONICS, affordable)));
  const terms = perPeriod.flat();
  const columns = 2 + 2 * terms.length + width;
  const centre = (first + last) / 2;
  const scale = Math.max(1, (last - first) / 2);
  // Centred and scaled so y'y - b'c keeps its digits and the ridge means the same on any data.
  const mean = target.reduce((a, b) => a + b, 0) / n;
  const spread = Math.sqrt(target.reduce((a, v) => a + (v - mean) ** 2, 0) / n) || 1;
  const y = Float64Array.from(target, (v) => (v - mean) / spread);
  const ridge = 1e-9 * n;
  const featureColumns = Array.from({ length: width }, (_, f) => 2 + 2 * terms.length + f);
  const offsets = perPeriod.map((_, i) => 2 + 2 * perPeriod.slice(0, i).reduce((a, ts) => a + ts.length, 0));
  // With integrated errors the regression is fitted on differences, where the intercept vanishes.
  const columnsFor = (integrated: boolean) => (ks: number[]) => [
    ...(integrated ? [1] : [0, 1]),
    ...ks.flatMap((k, i) => Array.from({ length: 2 * k }, (_, j) => offsets[i]! + j)),
    ...featureColumns,
  ];
  const regressionOf = (design: GramSystem, integrated: boolean) => {
    const columnsOf = columnsFor(integrated);
    const ks = chooseHarmonics(design, perPeriod, columnsOf, ridge);
    const fit = solveSubset(design, columnsOf(ks), ridge);
    if (!fit) throw new Error('harmonic: the regression could not be solved');
    const beta = new Array<number>(columns).fill(0);
    columnsOf(ks).forEach((c, i) => (beta[c] = fit.beta[i]! * spread));
    return {
      ks,
      terms: perPeriod.flatMap((ts, i) => ts.slice(0, ks[i])),
      centre,
      scale,
      intercept: mean + beta[0]!,
      slope: beta[1]!,
      fourier: perPeriod.flatMap((ts, i) => ts.slice(0, ks[i]).flatMap((_, j) => [beta[offsets[i]! + 2 * j]!, beta[offsets[i]! + 2 * j + 1]!])),
      features: featureColumns.map((c) => beta[c]!),
    };
  };
  const residualsOf = (model: Regression) => {
    const residuals = time.map((t, i) => target[i]! - regressionAt(model, t, rows.features[i]!));
    return gridOf({ time, target: residuals }, 'harmonic', ARMA_HISTORY);
  };
  // Ordinary least squares first. Its residuals decide d (KPSS, as auto.arima) and give an AR(<= 3) of the
  // (differenced) errors; the rows filtered by (1 - B)^d and that AR are then fitted again, K chosen anew
  // (AICc assumes independent errors: on autocorrelated ones OLS takes slow noise for harmonics).
  let regression = regressionOf(designOf(time, rows.features, y, centre, scale, terms, columns, [], (share) => progress(0.3 * share)), false);
  progress(0.4);
  const olsErrors = residualsOf(regression).series;
  const { d } = chooseDifferencing(olsErrors, 0);
  const ar = fitArma(Float64Array.from(d === 1 ? diff(olsErrors, 1) : olsErrors), MAX_AR, 0).ar;
  // 1 - sum c_j B^j = (1 - B)^d (1 - sum ar_j B^j).
  const filter = d === 1 ? [1, ...ar.map((c, j) => c - (j === 0 ? 1 : ar[j - 1]!)), ...(ar.length > 0 ? [-ar[ar.length - 1]!] : [])] : ar;
  if (filter.length > 0) {
    const whitened = designOf(time, rows.features, y, centre, scale, terms, columns, filter, (share) => progress(0.4 + 0.2 * share));
    if (whitened.rows > columns + 2) regression = regressionOf(whitened, d === 1);
  }
  const { ks, ...partial } = regression;
  progress(0.7);

  const grid = residualsOf(partial);
  const e = Float64Array.from(grid.series);
  const w = d === 1 ? e.subarray(1).map((v, t) => v - e[t]!) : e;
  const arma = fitArma(w);
  const { innovations, oneStep } = innovationsOf(w, arma);
  let sse = 0;
  for (let t = 0; t < w.length; t++) sse += innovations[t]! ** 2;
  const kept = Math.min(IN_SAMPLE_STEPS, e.length);
  // One-step error at grid step t: the ARMA's value, plus the previous error when integrated.
  const errorAt = (t: number) => (d === 0 ? oneStep[t]! : t === 0 ? 0 : e[t - 1]! + oneStep[t - 1]!);
  progress(1);
  return {
    version: 1,
    periods: periods.map((period, i) => ({ period, harmonics: ks[i]! })),
    ...partial,
    d,
    ar: arma.ar,
    ma: arma.ma,
    lastLevel: d === 1 ? e[e.length - 1]! : 0,
    lastErrors: Array.from(w.subarray(Math.max(0, w.length - MAX_AR))),
    lastInnovations: Array.from(innovations.subarray(Math.max(0, w.length - MAX_MA))),
    errorFitted: Array.from({ length: kept }, (_, i) => errorAt(e.length - kept + i)),
    sigma2: sse / Math.max(1, w.length - arma.ar.length - arma.ma.length),
    lastTime: last,
    start: grid.start + e.length - kept,
  };
}

type Regression = Pick<HarmonicState, 'terms' | 'centre' | 'scale' | 'intercept' | 'slope' | 'fourier' | 'features'>;

export function regressionAt(model: Regression, t: number, features: number[]): number {
  let v = model.intercept + (model.slope * (t - model.centre)) / model.scale;
  model.terms.forEach(({ period, k }, i) => {
    const angle = (2 * Math.PI * k * t) / period;
    v += model.fourier[2 * i]! * Math.sin(angle) + model.fourier[2 * i + 1]! * Math.cos(angle);
  });
  model.features.forEach((b, f) => (v += b * (features[f] ?? 0)));
  return v;
}

export function describeHarmonic(state: HarmonicState): string {
  const seasons = state.periods.map(({ period, harmonics }) => `K=${harmonics} of ${period}`).join(', ');
  const inputs = state.features.length > 0 ? `, ${state.features.length} inputs` : '';
  return `dynamic harmonic regression (trend, Fourier terms ${seasons || 'none'}${inputs}) with ARIMA(${state.ar.length},${state.d},${state.ma.length}) errors, K and orders by AICc`;
}

function revive(state: HarmonicState): FittedModel<HarmonicState> {
  return {
    state,
    describe: () => describeHarmonic(state),
    predict(rows: PredictRows): number[] {
      const ahead = rows.time.reduce((most, time) => Math.max(most, Math.round(time) - state.lastTime), 0);
      const path = errorPath(state, ahead);
      return rows.time.map((time, i) => {
        const t = Math.round(time);
        const regression = regressionAt(state, t, rows.features[i] ?? []);
        if (t > state.lastTime) return regression + path[t - state.lastTime - 1]!;
        const k = t - state.start;
        return regression + (k >= 0 ? state.errorFitted[k]! : 0);
      });
    },
  };
}

export const harmonicFamily: ModelFamily<HarmonicState> = {
  name: 'harmonic',
  kind: 'numeric',
  applies: (info, n) => info.timeOrdered && hasLongSeason(info) && n >= MIN_ROWS,
  // The Gram matrices dominate, O(rows columns^2) on the recent rows; measured about 3x ets's fit on 4,000
  // half-hourly rows and 40x on 100,000 five-minute rows.
  cost: (info, n) => {
    const used = Math.min(n, Math.max(MIN_HISTORY, HISTORY_CYCLES * Math.max(0, ...info.periods)));
    const columns = Math.min(2 + 2 * MAX_HARMONICS * info.periods.length, Math.sqrt(GRAM_WORK / Math.max(1, used)));
    return Math.max(2, Math.round((used * columns ** 2) / 300_000));
  },
  fit(rows: FitRows, ctx: FitContext) {
    return revive(fitHarmonic(rows, ctx.info.periods, (share) => ctx.progress(share)));
  },
  revive(state) {
    if (state.version !== 1) throw new Error('harmonic: unsupported stored state');
    return revive(state);
  },
};
