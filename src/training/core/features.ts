/**
 * The exogenous features every model family sees (FitRows.features): what the user's input columns and the
 * calendar say about a row, never the output or its lags. Fitted once on the known rows (inputs of known
 * rows are not the target, so using all of them in every backtest window leaks nothing) and stored with the
 * model as plain JSON, so a reloaded model builds the same numbers.
 *
 *  - numeric input: standardised (known rows' mean and standard deviation); an unreadable cell -> 0 (the mean);
 *  - categorical input: one-hot over the MAX_CATEGORIES most frequent categories of the known rows (ties by
 *    name); other or empty -> all zeros;
 *  - calendar, from the row's date: only cycles LONGER than the detected season, because the families model
 *    the season itself from the time index (linear: season dummies; SARIMA: seasonal terms):
 *      year cycle (Fourier pairs sin/cos(2 pi k * dayOfYear / 365.25), k = 1..YEAR_HARMONICS) for daily or
 *      finer data spanning at least a year; weekday one-hot for hourly or finer data;
 *    and for tabular data (no regular time axis) with dates, the standardised position in years plus the
 *    year cycle, since nothing else carries the date;
 *  - a numeric input the user stated as an input but left empty in every row to forecast: its
 *    past only, the value `lag` steps earlier on the series' time axis (the series' horizon, so every row to
 *    forecast within it has a known lagged value), else the column's last known value before that, else its
 *    first known value; standardised. The stored state keeps the known values the rows to forecast need, so
 *    a reloaded model builds the same numbers. Absent (not even an empty list) when no column is lagged.
 */
import type { DateTime } from 'luxon';
import type { CellReader } from './encoder.js';
import type { Analysis } from './series.js';
import { isEmptyCell, parseNumber } from './values.js';

export const MAX_CATEGORIES = 50;
export const YEAR_HARMONICS = 3;
const DAY_MS = 86_400_000;

export interface FeatureSpaceState {
  numeric: { column: string; mean: number; sd: number }[];
  categorical: { column: string; categories: string[] }[];
  /** Fourier pairs of the year cycle (0 = none). */
  yearHarmonics: number;
  weekday: boolean;
  /** Standardised years since the epoch, for tabular data with dates. */
  years: { mean: number; sd: number } | null;
  /** Stated inputs with no future, used through their past; absent when none (and in earlier models). */
  lagged?: LaggedInputState[];
}

/** One stated input used through its value `lag` steps earlier. */
export interface LaggedInputState {
  column: string;
  /** Steps back on the series' time axis: the series' horizon. */
  lag: number;
  /** The column's known values: their mean and standard deviation standardise the feature. */
  mean: number;
  sd: number;
  /**
   * Known values by time, ascending: those the rows to forecast need (from the earliest row's time minus
   * the lag on, and the one before it, the fallback of a missing step).
   */
  times: number[];
  values: number[];
}

export function fitFeatureSpace(analysis: Analysis, timeOrdered: boolean): FeatureSpaceState {
  const known = analysis.known.map((i) => analysis.readers[i] as CellReader);
  const numeric: FeatureSpaceState['numeric'] = [];
  const categorical: FeatureSpaceState['categorical'] = [];
  for (const col of analysis.columns) {
    if (col.role !== 'input') continue;
    if (col.kind === 'numeric') {
      numeric.push({ column: col.name, ...meanSd(known.map((read) => parseNumber(read(col.name)) as number)) });
    } else {
      const counts = new Map<string, number>();
      for (const read of known) {
        const cell = read(col.name);
        if (!isEmptyCell(cell)) counts.set((cell as string).trim(), (counts.get((cell as string).trim()) ?? 0) + 1);
      }
      const categories = [...counts]
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, MAX_CATEGORIES)
        .map(([name]) => name)
        .sort();
      categorical.push({ column: col.name, categories });
    }
  }
  const dates = analysis.known.map((i) => analysis.timeline[i]).filter((d): d is DateTime => d != null);
  const axis = analysis.timeAxis;
  const spanDays = dates.length > 1 ? ((dates.at(-1) as DateTime).toMillis() - (dates[0] as DateTime).toMillis()) / DAY_MS : 0;
  const subDaily = axis.unit === 'hour' || axis.unit === 'minute';
  const daily = axis.unit === 'day' || subDaily;
  const yearHarmonics = dates.length > 0 && Math.abs(spanDays) >= 365 && (daily || !timeOrdered) ? YEAR_HARMONICS : 0;
  const weekday = axis.realDates && subDaily && dates.length > 0;
  const years = !timeOrdered && dates.length > 1 ? meanSd(dates.map(yearsOf)) : null;
  return { numeric, categorical, yearHarmonics, weekday, years };
}

/**
 * The lagged inputs of a series: each column of `columns` with known numeric values, read `lag`
 * steps back on the known rows' times (`knownTimes`, aligned with analysis.known). `needFrom` is the earliest
 * time a row to forecast reads (its time minus the lag): the stored history starts there (one value before).
 * Returns the full history (to build the known rows' features) and the state to store.
 */
export function fitLaggedInputs(
  analysis: Analysis,
  columns: string[],
  knownTimes: number[],
  lag: number,
  needFrom: number,
): { full: LaggedInputState[]; stored: LaggedInputState[] } {
  const full: LaggedInputState[] = [];
  const stored: LaggedInputState[] = [];
  for (const column of columns) {
    const times: number[] = [];
    const values: number[] = [];
    analysis.known.forEach((i, k) => {
      const v = parseNumber((analysis.readers[i] as CellReader)(column));
      if (v === null) return;
      const t = knownTimes[k] as number;
      // Known rows are in time order; a repeated time keeps its last value.
      if (times.length > 0 && (times[times.length - 1] as number) >= t) {
        if (times[times.length - 1] === t) values[values.length - 1] = v;
        return;
      }
      times.push(t);
      values.push(v);
    });
    if (values.length === 0) continue;
    const { mean, sd } = meanSd(values);
    full.push({ column, lag, mean, sd, times, values });
    const first = Math.max(0, lastAtOrBefore(times, needFrom - 1));
    stored.push({ column, lag, mean, sd, times: times.slice(first), values: values.slice(first) });
  }
  return { full, stored };
}

/** Index of the last time <= t (-1 when none). */
function lastAtOrBefore(times: number[], t: number): number {
  let lo = 0;
  let hi = times.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((times[mid] as number) <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The value a row at `time` reads: `lag` steps back, else the last known before, else the first known. */
export function laggedValue(f: LaggedInputState, time: number): number | null {
  if (f.values.length === 0) return null;
  const k = lastAtOrBefore(f.times, time - f.lag);
  return f.values[Math.max(0, k)] as number;
}

export function featureNames(state: FeatureSpaceState): string[] {
  const names = state.numeric.map((f) => f.column);
  for (const f of state.categorical) for (const c of f.categories) names.push(`${f.column}=${c}`);
  if (state.years) names.push('years');
  for (let k = 1; k <= state.yearHarmonics; k++) names.push(`year_sin${k}`, `year_cos${k}`);
  if (state.weekday) for (let d = 1; d <= 7; d++) names.push(`weekday=${d}`);
  for (const f of state.lagged ?? []) names.push(laggedName(f));
  return names;
}

/** The feature name of a lagged input, e.g. "footfall (lag 6)". */
export const laggedName = (f: Pick<LaggedInputState, 'column' | 'lag'>) => `${f.column} (lag ${f.lag})`;

/**
 * The feature vector of one row; `date` is the row's place on the time axis (null when unknown), `time` its
 * position in steps (read by the lagged inputs only; null when unknown).
 */
export function featuresOf(state: FeatureSpaceState, read: CellReader, date: DateTime | null, time: number | null = null): number[] {
  const x: number[] = [];
  for (const f of state.numeric) {
    const v = parseNumber(read(f.column));
    x.push(v === null ? 0 : (v - f.mean) / f.sd);
  }
  for (const f of state.categorical) {
    const cell = read(f.column);
    const value = isEmptyCell(cell) ? null : (cell as string).trim();
    for (const c of f.categories) x.push(c === value ? 1 : 0);
  }
  if (state.years) x.push(date ? (yearsOf(date) - state.years.mean) / state.years.sd : 0);
  for (let k = 1; k <= state.yearHarmonics; k++) {
    const angle = date ? (2 * Math.PI * k * (date.ordinal - 1 + date.hour / 24)) / 365.25 : null;
    x.push(angle === null ? 0 : Math.sin(angle), angle === null ? 0 : Math.cos(angle));
  }
  if (state.weekday) for (let d = 1; d <= 7; d++) x.push(date?.weekday === d ? 1 : 0);
  for (const f of state.lagged ?? []) {
    const v = time === null ? null : laggedValue(f, time);
    x.push(v === null ? 0 : (v - f.mean) / f.sd);
  }
  return x;
}

function yearsOf(date: DateTime): number {
  return date.toMillis() / (365.25 * DAY_MS);
}

/** Mean and standard deviation; a constant column gets sd 1 so it standardises to 0. */
function meanSd(values: number[]): { mean: number; sd: number } {
  if (values.length === 0) return { mean: 0, sd: 1 };
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
  const sd = Math.sqrt(variance);
  return { mean, sd: sd > 1e-12 ? sd : 1 };
}
