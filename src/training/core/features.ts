/**
 * The exogenous features every model family sees (FitRows.features): what the user's input columns and the
 * calendar say about a row, never the output or its lags. Fitted once on the known rows (inputs of known
 * rows are not the target, so using all of them in every backtest window leaks nothing) and stored with the
 * model as plain JSON, so a reloaded model builds the same numbers.
 *
 *  - numeric input: standardised (known rows' mean and standard deviation); a cell with no number, in a known
 *    row or a row to forecast, reads the column's last value before it on the time axis (carried forward; the
 *    first value where none comes before), so no row reads a made-up mean; with no time axis it reads 0 (the
 *    mean). The values those cells read are stored (`carried`), absent when no cell needs one;
 *  - inputs that cannot teach a model anything are not features (unusedInputs): a numeric or text input with
 *    one value in every known row, no value in any known row, the same cells as an earlier input in every row,
 *    or (numbers) a correlation of at least COLLINEAR in absolute value with an earlier input over the known
 *    rows: the later of two is left out;
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
  /**
   * Numeric inputs with cells holding no number on a time axis: the values such cells read, by the row's time
   * (epoch ms), ascending; a cell reads the last at or before its row's time (the first where none). Absent
   * when no cell of a known row or a row to forecast needs one (and in earlier models).
   */
  carried?: { column: string; times: number[]; values: number[] }[];
}

/** |correlation| over the known rows at or above which the later of two numeric inputs is left out. */
export const COLLINEAR = 0.999;
/** Pairs x known rows up to which collinear inputs are looked for (a wide upload of hundreds of inputs is not). */
const COLLINEAR_BUDGET = 50_000_000;

/** Why an input is not a feature, as the report says it. */
export type UnusedInput =
  | { column: string; reason: 'constant'; value: string }
  | { column: string; reason: 'no known value' }
  | { column: string; reason: 'duplicate'; of: string }
  | { column: string; reason: 'collinear'; of: string; correlation: number };

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
  const unused = new Set(unusedInputs(analysis).map((u) => u.column));
  const carried: NonNullable<FeatureSpaceState['carried']> = [];
  for (const col of analysis.columns) {
    if (col.role !== 'input' || unused.has(col.name)) continue;
    if (col.kind === 'numeric') {
      numeric.push({ column: col.name, ...meanSd(numbersOf(known, col.name)) });
      const table = timeOrdered ? carriedTable(analysis, col.name) : null;
      if (table) carried.push(table);
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
  return { numeric, categorical, yearHarmonics, weekday, years, ...(carried.length > 0 ? { carried } : {}) };
}

/** The readable numbers of a column over some rows. */
function numbersOf(rows: CellReader[], column: string): number[] {
  const values: number[] = [];
  for (const read of rows) {
    const v = parseNumber(read(column));
    if (v !== null) values.push(v);
  }
  return values;
}

/**
 * The values a numeric input's cells with no number read, known rows and rows to forecast alike: for each
 * such cell, the last value at or before its row's time (the first value where none), kept with the column's
 * first and last values so a reloaded model reads the same and a later row the last. Null when every cell of
 * those rows holds a number or the rows have no dates.
 */
function carriedTable(analysis: Analysis, column: string): { column: string; times: number[]; values: number[] } | null {
  const filled: { t: number; v: number }[] = [];
  const missing: number[] = [];
  for (const i of [...analysis.known, ...analysis.forecast]) {
    const date = analysis.timeline[i];
    if (!date) continue;
    const v = parseNumber((analysis.readers[i] as CellReader)(column));
    if (v === null) missing.push(date.toMillis());
    else filled.push({ t: date.toMillis(), v });
  }
  if (missing.length === 0 || filled.length === 0) return null;
  filled.sort((a, b) => a.t - b.t);
  const times = filled.map((f) => f.t);
  const keep = new Set<number>([0, filled.length - 1]);
  for (const t of missing) keep.add(Math.max(0, lastAtOrBefore(times, t)));
  const picked = [...keep].sort((a, b) => a - b);
  return { column, times: picked.map((k) => times[k] as number), values: picked.map((k) => (filled[k] as { v: number }).v) };
}

/** The value a cell with no number reads from its column's carried table at `time` (epoch ms). */
function carriedValue(table: { times: number[]; values: number[] }, time: number): number {
  return table.values[Math.max(0, lastAtOrBefore(table.times, time))] as number;
}

const unusedCache = new WeakMap<Analysis, UnusedInput[]>();

/**
 * The inputs that are not features, in column order, and why (see the module comment); the report says
 * each (series-report.ts). Computed once per analysis.
 */
export function unusedInputs(analysis: Analysis): UnusedInput[] {
  const cached = unusedCache.get(analysis);
  if (cached) return cached;
  const inputs = analysis.columns.filter((c) => c.role === 'input');
  const rows = [...analysis.known, ...analysis.forecast].map((i) => analysis.readers[i] as CellReader);
  const knownCount = analysis.known.length;
  const unused: UnusedInput[] = [];
  // Numbers (null: no number) or trimmed text ('' : empty) of every row, known rows first.
  const kept: { column: string; numeric: boolean; cells: (number | string | null)[] }[] = [];
  const text = (cell: string | null | undefined) => (isEmptyCell(cell) ? '' : (cell as string).trim());
  const pairBudget = COLLINEAR_BUDGET / Math.max(1, knownCount);
  let pairs = 0;
  for (const col of inputs) {
    const numeric = col.kind === 'numeric';
    const cells: (number | string | null)[] = rows.map((read) => (numeric ? parseNumber(read(col.name)) : text(read(col.name))));
    const knownCells = cells.slice(0, knownCount).filter((c) => c !== null && c !== '');
    if (numeric && knownCells.length === 0) {
      unused.push({ column: col.name, reason: 'no known value' });
      continue;
    }
    // Text: constant only when every known row holds the same value (an empty cell is a category of its own).
    const distinct = new Set(numeric ? knownCells : cells.slice(0, knownCount));
    if (distinct.size === 1 && knownCells.length > 0) {
      unused.push({ column: col.name, reason: 'constant', value: String(knownCells[0]) });
      continue;
    }
    const same = kept.find((k) => k.numeric === numeric && k.cells.every((c, r) => c === cells[r]));
    if (same) {
      unused.push({ column: col.name, reason: 'duplicate', of: same.column });
      continue;
    }
    if (numeric) {
      let collinear: { of: string; correlation: number } | null = null;
      for (const k of kept) {
        if (!k.numeric || pairs >= pairBudget) continue;
        pairs++;
        const r = correlation(k.cells as (number | null)[], cells as (number | null)[], knownCount);
        if (r !== null && Math.abs(r) >= COLLINEAR) {
          collinear = { of: k.column, correlation: r };
          break;
        }
      }
      if (collinear) {
        unused.push({ column: col.name, reason: 'collinear', ...collinear });
        continue;
      }
    }
    kept.push({ column: col.name, numeric, cells });
  }
  unusedCache.set(analysis, unused);
  return unused;
}

/** Pearson's correlation of the first `n` pairs where both hold a number; null below 3 pairs or with no spread. */
function correlation(a: (number | null)[], b: (number | null)[], n: number): number | null {
  let count = 0;
  let sa = 0;
  let sb = 0;
  for (let i = 0; i < n; i++) {
    if (a[i] === null || b[i] === null) continue;
    count++;
    sa += a[i] as number;
    sb += b[i] as number;
  }
  if (count < 3) return null;
  const ma = sa / count;
  const mb = sb / count;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    if (a[i] === null || b[i] === null) continue;
    const da = (a[i] as number) - ma;
    const db = (b[i] as number) - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : null;
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

/** Units of the user's column one step of each feature is, in featureNames' order: the standard deviation a numeric input was divided by, 1 for one-hot and calendar terms. */
export function featureScales(state: FeatureSpaceState): number[] {
  return [
    ...state.numeric.map((f) => f.sd),
    ...state.categorical.flatMap((f) => f.categories.map(() => 1)),
    ...(state.years ? [state.years.sd] : []),
    ...Array.from({ length: 2 * state.yearHarmonics }, () => 1),
    ...(state.weekday ? Array.from({ length: 7 }, () => 1) : []),
    ...(state.lagged ?? []).map((f) => f.sd),
  ];
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
    let v = parseNumber(read(f.column));
    if (v === null && date && state.carried) {
      const table = state.carried.find((c) => c.column === f.column);
      if (table) v = carriedValue(table, date.toMillis());
    }
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
