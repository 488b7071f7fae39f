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
 *    year cycle, since nothing else carries the date.
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

export function featureNames(state: FeatureSpaceState): string[] {
  const names = state.numeric.map((f) => f.column);
  for (const f of state.categorical) for (const c of f.categories) names.push(`${f.column}=${c}`);
  if (state.years) names.push('years');
  for (let k = 1; k <= state.yearHarmonics; k++) names.push(`year_sin${k}`, `year_cos${k}`);
  if (state.weekday) for (let d = 1; d <= 7; d++) names.push(`weekday=${d}`);
  return names;
}

/** The feature vector of one row; `date` is the row's place on the time axis (null when unknown). */
export function featuresOf(state: FeatureSpaceState, read: CellReader, date: DateTime | null): number[] {
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
