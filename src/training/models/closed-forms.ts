/**
 * Closed forms the series families share: the regular time grid a fit works on, differences and moments, the
 * least-squares line (the ETS and Theta families' starting slope, the trending drift), and the forecast of a
 * SARIMA model without AR or MA terms, which the `arima` package gets wrong (see noiseOnlyForecast).
 */
import type { SarimaOrders } from './sarima-fit.js';

/** The package forecasts these without the series' level, so their forecast is noiseOnlyForecast's. */
export const noiseOnly = (o: SarimaOrders) => o.p + o.q + o.P + o.Q === 0;

/**
 * Forecasts of a model without AR or MA terms, (1-B)^d (1-B^s)^D y_t = c + e_t: the package fits these but
 * forecasts them without the series' level (zeros, or the drift line through the origin: a test shows it),
 * so they are computed here. c is the mean of the differenced series when the model has a drift (or a mean,
 * d+D = 0), the least-squares line through it when the drift trends, and 0 otherwise; future noise is 0.
 */
export function noiseOnlyForecast(series: number[], o: SarimaOrders, steps: number): number[] {
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

export function diff(x: number[], lag: number): number[] {
  const out: number[] = [];
  for (let i = lag; i < x.length; i++) out.push(x[i]! - x[i - lag]!);
  return out;
}

export function mean(x: number[]): number {
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

export function variance(x: number[]): number {
  const m = mean(x);
  let s = 0;
  for (const v of x) s += (v - m) ** 2;
  return s / x.length;
}

/**
 * AICc of a Gaussian fit from its sum of squared errors over n observations with k parameters (the form ETS,
 * harmonic regression and the differencing compare their candidates by); Infinity where n <= k + 1.
 */
export function gaussianAicc(sse: number, n: number, k: number): number {
  return n - k - 1 > 0 ? n * Math.log(Math.max(sse, 1e-300) / n) + 2 * k + (2 * k * (k + 1)) / (n - k - 1) : Infinity;
}
