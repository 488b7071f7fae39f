/**
 * Naive baselines on the benchmark's split, computed here (not by the service): what a spreadsheet user
 * tries first. Fitted on the known rows only.
 *  - time series (the rows to forecast are the last `h` rows): last value, seasonal naive (the value one
 *    season earlier, the last season repeated), drift (the line through the first and last known values),
 *    seasonal naive + drift (seasonal naive plus the mean seasonal difference per season elapsed), mean,
 *    per-season mean (month-of-year mean for monthly data; month climatology for daily data, and the same
 *    calendar day last year as a second seasonal naive; weekly seasonal naive too; quarterly: seasonal naive), median;
 *    sub-daily data: the seasonal naive of each period (a day ago, a week ago) and each + drift;
 *  - tabular regression: the mean and the median of the known rows; classification: the majority class.
 * The median is beyond issue 10's list, but it is the constant with the least absolute error, the metric
 * scored here, and the engine offers it: leaving it out would set the bar lower than a naive user can reach.
 */
import type { ForecastSet } from './datasets.js';

export type Predictions = (number | string)[];

export function naiveForecasts(set: ForecastSet): Record<string, Predictions> {
  const hidden = new Set(set.hidden);
  const knownIdx = set.y.map((_, i) => i).filter((i) => !hidden.has(i));
  if (set.task === 'classification') {
    const counts = new Map<string, number>();
    for (const i of knownIdx) counts.set(String(set.y[i]), (counts.get(String(set.y[i])) ?? 0) + 1);
    const majority = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
    return { majority: set.hidden.map(() => majority) };
  }
  const known = knownIdx.map((i) => Number(set.y[i]));
  const mean = known.reduce((s, v) => s + v, 0) / known.length;
  const median = medianOf(known);
  if (!set.time) {
    return { mean: set.hidden.map(() => mean), median: set.hidden.map(() => median) };
  }
  // Time series: the hidden rows are the tail.
  const n = known.length;
  const h = set.hidden.length;
  const last = known[n - 1]!;
  const slope = (last - known[0]!) / (n - 1);
  const steps = Array.from({ length: h }, (_, i) => i);
  const out: Record<string, Predictions> = {
    naive: steps.map(() => last),
    drift: steps.map((i) => last + (i + 1) * slope),
    mean: steps.map(() => mean),
    median: steps.map(() => median),
  };
  const seasonal = (s: number, name: string) => {
    if (s <= 1 || n < 2 * s) return;
    out[name] = steps.map((i) => known[n - s + (i % s)]!);
    // Mean seasonal difference y[t] - y[t-s] (telescopes to the last season's sum minus the first's).
    let diff = 0;
    for (let t = s; t < n; t++) diff += known[t]! - known[t - s]!;
    diff /= n - s;
    out[`${name} + drift`] = steps.map((i) => known[n - s + (i % s)]! + (Math.floor(i / s) + 1) * diff);
  };
  const { frequency, dates, season } = set.time;
  const month = (i: number) => Number(dates[i]!.slice(5, 7));
  const perMonth = () => {
    const sums = new Map<number, { s: number; c: number }>();
    for (const i of knownIdx) {
      const m = sums.get(month(i)) ?? { s: 0, c: 0 };
      m.s += Number(set.y[i]);
      m.c += 1;
      sums.set(month(i), m);
    }
    return set.hidden.map((i) => {
      const m = sums.get(month(i));
      return m ? m.s / m.c : mean;
    });
  };
  // Sub-daily data (issue 28): the value a day ago and a week ago, repeated (periods shortest first).
  const periods = set.time.periods ?? [];
  periods.forEach((p, k) => seasonal(p, k === 0 ? 'daily naive' : k === periods.length - 1 ? 'weekly naive' : `naive ${p}`));
  if (frequency === 'quarterly') seasonal(season, 'seasonal naive');
  if (frequency === 'monthly') {
    seasonal(season, 'seasonal naive');
    out['month mean'] = perMonth();
  } else if (frequency === 'daily') {
    seasonal(7, 'weekly naive');
    if (season !== 7) seasonal(season, 'yearly naive');
    out['month climatology'] = perMonth();
  }
  return out;
}

export function medianOf(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const half = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[half]! : (sorted[half - 1]! + sorted[half]!) / 2;
}

/** Each naive forecast's score at the data's precision, by name. */
export function naiveScores(set: ForecastSet): Record<string, number> {
  return Object.fromEntries(Object.entries(naiveForecasts(set)).map(([name, p]) => [name, score(set, p, true)]));
}

/**
 * MAE or error rate of `predictions` against the truth. `atDataPrecision` rounds numeric predictions to the
 * output's decimals in the upload first (the peers'; the service's forecast already comes at that precision),
 * so a tie with a naive forecast is not lost to the third decimal.
 */
export function score(set: ForecastSet, predictions: Predictions, atDataPrecision = false): number {
  if (atDataPrecision && set.task === 'regression') {
    const f = 10 ** set.decimals;
    predictions = predictions.map((p) => Math.round(Number(p) * f) / f);
  }
  if (predictions.length !== set.truth.length) throw new Error(`${set.id}: ${predictions.length} predictions for ${set.truth.length} rows`);
  if (set.task === 'classification') return predictions.filter((p, i) => String(p) !== String(set.truth[i])).length / set.truth.length;
  return predictions.reduce<number>((s, p, i) => s + Math.abs(Number(p) - Number(set.truth[i])), 0) / set.truth.length;
}

/**
 * MASE's scale (issue 28): the in-sample MAE of the seasonal naive of lag `lag` over the known rows, so that a
 * forecast's MAE over it is its MASE (Hyndman & Koehler 2006; M4's convention with the season as the lag).
 */
export function maseScale(set: ForecastSet, lag: number): number {
  const hidden = new Set(set.hidden);
  const known = set.y.filter((_, i) => !hidden.has(i)).map(Number);
  let sum = 0;
  for (let t = lag; t < known.length; t++) sum += Math.abs(known[t]! - known[t - lag]!);
  const scale = sum / Math.max(1, known.length - lag);
  return scale > 0 ? scale : 1;
}
