/**
 * Time axis of an upload: reconstructs a timestamp per row from the date columns, detects the series
 * frequency (for the seasonal-naive baseline and the forecast horizon) and steps future dates with luxon.
 * Everything is computed in UTC so DST never creates or swallows an hour.
 */
import { DateTime } from 'luxon';
import type { DatePart } from './types.js';

export const PART_ORDER: readonly DatePart[] = ['year', 'month', 'day', 'hour', 'minute'];

/** Period of the cyclic (sin/cos) encoding of each part; year is not cyclic. */
export const PART_PERIOD: Record<DatePart, number> = { year: 0, month: 12, day: 31, hour: 24, minute: 60 };

const PART_MIN: Record<DatePart, number> = { year: 2001, month: 1, day: 1, hour: 0, minute: 0 };

/**
 * Tried in order for whole-date columns; the first format that parses every known cell wins, so
 * day-first beats month-first for ambiguous data (the legacy users are European).
 */
export const DATE_FORMATS: readonly string[] = [
  "yyyy-MM-dd'T'HH:mm:ss",
  "yyyy-MM-dd'T'HH:mm",
  'yyyy-MM-dd HH:mm:ss',
  'yyyy-MM-dd HH:mm',
  'yyyy-MM-dd',
  'yyyy/MM/dd HH:mm',
  'yyyy/MM/dd',
  'dd/MM/yyyy HH:mm:ss',
  'dd/MM/yyyy HH:mm',
  'dd/MM/yyyy',
  'd/M/yyyy HH:mm',
  'd/M/yyyy',
  'MM/dd/yyyy HH:mm',
  'MM/dd/yyyy',
  'M/d/yyyy',
  'dd-MM-yyyy',
  'dd.MM.yyyy',
  'd.M.yyyy',
  'yyyy-MM',
  'yyyy/MM',
  'MM/yyyy',
  'yyyy',
];

let parseCache: Map<string, DateTime | null> | null = null;

/**
 * Runs a synchronous `fn` with date parsing memoized: a training parses each date cell ~6 times (validation,
 * timeline, two encoder fits, two encodings) and luxon's fromFormat costs ~15-30 us. Scoped, so a long-lived
 * worker does not accumulate a cache.
 */
export function withDateCache<T>(fn: () => T): T {
  const previous = parseCache;
  parseCache = new Map();
  try {
    return fn();
  } finally {
    parseCache = previous;
  }
}

export function parseDate(value: string, format: string): DateTime | null {
  const key = parseCache ? `${format}\u0001${value}` : '';
  const cached = parseCache?.get(key);
  if (cached !== undefined) return cached;
  const dt = DateTime.fromFormat(value.trim(), format, { zone: 'utc' });
  const result = dt.isValid ? dt : null;
  parseCache?.set(key, result);
  return result;
}

/** Format detection looks at up to this many cells, evenly spread, so huge uploads stay fast. */
const DETECTION_SAMPLE = 500;

/**
 * The format that parses the most cells (earlier formats win ties); null when none parses any. Cells the
 * chosen format cannot parse make their known rows invalid.
 */
export function detectDateFormat(values: string[]): string | null {
  const nonEmpty = values.map((v) => v.trim()).filter((v) => v !== '');
  const stride = Math.max(1, nonEmpty.length / DETECTION_SAMPLE);
  const sample: string[] = [];
  for (let i = 0; i < nonEmpty.length; i += stride) sample.push(nonEmpty[Math.floor(i)] as string);
  let best: string | null = null;
  let bestCount = 0;
  for (const format of DATE_FORMATS) {
    let count = 0;
    for (const v of sample) if (parseDate(v, format) !== null) count++;
    if (count > bestCount) {
      best = format;
      bestCount = count;
      if (count === sample.length) break;
    }
  }
  return best;
}

export type PartValues = Partial<Record<DatePart, number>>;

/**
 * Timestamps from date-part columns. Parts missing BELOW the coarsest present part default to their
 * minimum (month 1, day 1, hour 0, minute 0). When year (and maybe more) is missing above the coarsest
 * present part, a virtual counter starting at 2001-01 advances whenever the present parts go backwards
 * (e.g. month 12 -> 1 means a new year), so the series stays monotonic. Rows with missing parts -> null.
 */
export function timelineFromParts(rows: (PartValues | null)[], present: DatePart[]): (DateTime | null)[] {
  const parts = PART_ORDER.filter((p) => present.includes(p));
  const coarsest = parts[0];
  if (coarsest === undefined) return rows.map(() => null);
  let carry = 0;
  let previous: number[] | null = null;
  return rows.map((row) => {
    if (row === null || parts.some((p) => row[p] === undefined)) return null;
    const tuple = parts.map((p) => row[p] as number);
    if (previous !== null && coarsest !== 'year' && lexLess(tuple, previous)) carry++;
    previous = tuple;
    return dateFromParts(row, coarsest, carry);
  });
}

/** Same as one timelineFromParts step, for a single row whose carry is known (generation/predict). */
export function dateFromParts(row: PartValues, coarsest: DatePart, carry: number): DateTime | null {
  let base = DateTime.fromObject({ year: PART_MIN.year, month: 1, day: 1 }, { zone: 'utc' });
  if (coarsest === 'month') base = base.plus({ years: carry });
  else if (coarsest === 'day') base = base.plus({ months: carry });
  else if (coarsest === 'hour') base = base.plus({ days: carry });
  else if (coarsest === 'minute') base = base.plus({ hours: carry });
  const fromBase = (part: DatePart): boolean => PART_ORDER.indexOf(part) < PART_ORDER.indexOf(coarsest);
  const value = (part: DatePart): number =>
    row[part] ?? (fromBase(part) ? base[part] : PART_MIN[part]);
  const year = value('year');
  const month = value('month');
  if (!Number.isInteger(year) || !Number.isInteger(month) || month < 1 || month > 12) return null;
  const daysInMonth = DateTime.fromObject({ year, month, day: 1 }, { zone: 'utc' }).daysInMonth ?? 28;
  const day = Math.min(value('day'), daysInMonth);
  const dt = DateTime.fromObject(
    { year, month, day, hour: value('hour'), minute: value('minute') },
    { zone: 'utc' },
  );
  return dt.isValid ? dt : null;
}

function lexLess(a: number[], b: number[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    if (x !== y) return x < y;
  }
  return false;
}

export type Frequency = 'monthly' | 'daily' | 'hourly' | 'other';

export interface FrequencyInfo {
  frequency: Frequency;
  /** Stepping unit (finest part that varies) and step size in that unit (modal gap between rows). */
  unit: DatePart;
  step: number;
  /** Seasonal lag in rows for the baseline: monthly 12, daily 7, hourly 24, else 1 (= naive last value). */
  season: number;
  /** Future rows generated when the upload has no rows to forecast: one season (12/7/24), else 1. */
  horizon: number;
}

export const NO_TIME_AXIS: FrequencyInfo = { frequency: 'other', unit: 'day', step: 1, season: 1, horizon: 1 };

/**
 * Frequency from the modal positive gap between consecutive known timestamps, measured in `unit`.
 * Duplicated/backwards timestamps (several series in one file) are ignored for the mode.
 */
export function detectFrequency(timeline: (DateTime | null)[], unit: DatePart): FrequencyInfo {
  const counts = new Map<number, number>();
  let previous: DateTime | null = null;
  for (const dt of timeline) {
    if (dt === null) continue;
    if (previous !== null) {
      const gap = Math.round(gapIn(previous, dt, unit));
      if (gap > 0) counts.set(gap, (counts.get(gap) ?? 0) + 1);
    }
    previous = dt;
  }
  let step = 1;
  let best = 0;
  for (const [gap, count] of counts) {
    if (count > best || (count === best && gap < step)) {
      step = gap;
      best = count;
    }
  }
  if (step === 1 && unit === 'month') return { frequency: 'monthly', unit, step, season: 12, horizon: 12 };
  if (step === 1 && unit === 'day') return { frequency: 'daily', unit, step, season: 7, horizon: 7 };
  if (step === 1 && unit === 'hour') return { frequency: 'hourly', unit, step, season: 24, horizon: 24 };
  return { frequency: 'other', unit, step, season: 1, horizon: 1 };
}

const UNIT_MS: Partial<Record<DatePart, number>> = { day: 86_400_000, hour: 3_600_000, minute: 60_000 };

/** b - a in `unit`; plain arithmetic because luxon's diff() is slow on 100k-row uploads (UTC: days are 24 h). */
export function gapIn(a: DateTime, b: DateTime, unit: DatePart): number {
  if (unit === 'year') return b.year - a.year;
  if (unit === 'month') return (b.year - a.year) * 12 + (b.month - a.month);
  return (b.toMillis() - a.toMillis()) / (UNIT_MS[unit] as number);
}

/** Finest part whose value changes across the given dates (year if nothing changes). */
export function finestVaryingPart(dates: DateTime[]): DatePart {
  for (const part of [...PART_ORDER].reverse()) {
    const first = dates[0];
    if (first !== undefined && dates.some((d) => d[part] !== first[part])) return part;
  }
  return 'year';
}

/** Month-end series (2021-01-31, 2021-02-28, ...) are monthly even though their day varies. */
export function isMonthEndSeries(dates: DateTime[]): boolean {
  return dates.length > 1 && dates.every((d) => d.day === d.daysInMonth && d.hour === 0 && d.minute === 0);
}

export function stepDate(dt: DateTime, unit: DatePart, step: number, monthEnd = false): DateTime {
  const next = dt.plus({ [`${unit}s`]: step });
  // Jan 31 + 1 month = Feb 28; the next step must give Mar 31, not Mar 28.
  return monthEnd ? next.endOf('month').startOf('day') : next;
}
