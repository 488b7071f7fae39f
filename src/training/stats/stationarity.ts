/**
 * How much differencing a series needs, auto.arima's way: a KPSS test of level-stationarity for the regular
 * difference, the seasonal strength of a moving-average decomposition for the seasonal one; and whether a
 * series shows its season at all (the M4 test). The SARIMA search,
 * the differencing families, the harmonic regression's errors and the naive baselines' admission all decide by
 * these, so they decide alike.
 */
import { diff, mean, variance } from './closed-forms.js';

/**
 * Largest season differenced seasonally, and modelled with SARIMA's seasonal terms: a day of hours. Longer ones
 * make SARIMA's state space huge (a half-hourly season of 48 took 7x the fits of an hourly one, 20 s of a 15 s
 * budget); the MSTL and harmonic families model those seasons, and SARIMA still fits their non-seasonal ARIMA.
 */
export const MAX_SEASON = 24;
/** Most regular differences kpssDifferences takes (forecast::ndiffs' max.d). */
const MAX_D = 2;

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
export const KPSS_CRITICAL = 0.463;

/**
 * Whether a series may be read as a level with noise: the KPSS test at 5% (the one chooseDifferencing decides d
 * by) does not reject level-stationarity; a series of fewer than 8 values, or a constant one, is not tested.
 */
export function levelStationary(x: number[]): boolean {
  return !(x.length >= 8 && variance(x) > 0 && kpss(x) > KPSS_CRITICAL);
}

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

/** forecast::ndiffs with its defaults: KPSS level test at 5%, at most MAX_D differences, none of a constant. */
export function kpssDifferences(series: number[]): number {
  let x = series;
  let d = 0;
  while (d < MAX_D && x.length >= 2 && variance(x) > 0 && kpss(x) > KPSS_CRITICAL) {
    d++;
    x = diff(x, 1);
  }
  return d;
}

/** Longest season the M4 seasonality test (isSeasonal) is asked about: beyond it the test cannot tell. */
export const MAX_TESTED_SEASON = 60;

/**
 * The 90% seasonality test of the M4 benchmark's Theta: with r_k the autocorrelations, the series is seasonal
 * when |r_m| > 1.645 sqrt((1 + 2 sum_{k<m} r_k^2) / n), the season m is 2..MAX_TESTED_SEASON and at least two
 * seasons are there.
 */
export function isSeasonal(y: number[], m: number): boolean {
  const n = y.length;
  if (m < 2 || m > MAX_TESTED_SEASON || n < 2 * m) return false;
  const average = y.reduce((a, b) => a + b, 0) / n;
  const c0 = y.reduce((a, v) => a + (v - average) ** 2, 0);
  if (c0 === 0) return false;
  const acf = (k: number) => {
    let s = 0;
    for (let i = k; i < n; i++) s += ((y[i] as number) - average) * ((y[i - k] as number) - average);
    return s / c0;
  };
  let sum = 0;
  for (let k = 1; k < m; k++) sum += acf(k) ** 2;
  return Math.abs(acf(m)) > 1.645 * Math.sqrt((1 + 2 * sum) / n);
}
