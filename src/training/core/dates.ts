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
  // ISO 8601 in UTC or with an offset (sensor and API exports); offsets are converted to UTC.
  "yyyy-MM-dd'T'HH:mm:ss'Z'",
  "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'",
  "yyyy-MM-dd'T'HH:mm'Z'",
  "yyyy-MM-dd'T'HH:mm:ssZZ",
  "yyyy-MM-dd'T'HH:mm:ss.SSSZZ",
  "yyyy-MM-dd'T'HH:mmZZ",
  'yyyy-MM-dd HH:mm:ss',
  'yyyy-MM-dd HH:mm',
  'yyyy-MM-dd',
  'yyyy/MM/dd HH:mm:ss',
  'yyyy/MM/dd HH:mm',
  'yyyy/MM/dd',
  'dd/MM/yyyy HH:mm:ss',
  'dd/MM/yyyy HH:mm',
  'dd/MM/yyyy',
  'd/M/yyyy HH:mm',
  'd/M/yyyy',
  'MM/dd/yyyy HH:mm:ss',
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

/** What a whole date looks like before any format is tried: digits, separators, a time, maybe a zone. */
const DATE_LIKE = /^\d{1,4}[-/.]\d{1,2}([-/.]\d{1,4})?([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * The format of a column of whole dates that arrived as text (`timestamp` = `2000-06-05 00:30:00`): every
 * non-empty cell must read with one format; null otherwise. The legacy upload has roles only for date parts,
 * so a whole-date column comes in as a text input; the engine and the charts read it as the time axis.
 * Cells that do not look like dates are refused before any format is tried, so text columns
 * cost one regular expression per sampled cell.
 */
export function wholeDateFormat(values: (string | null | undefined)[]): string | null {
  const cells = values.map((v) => (v ?? '').trim()).filter((v) => v !== '');
  if (cells.length < 2) return null;
  const stride = Math.max(1, cells.length / DETECTION_SAMPLE);
  for (let i = 0; i < cells.length; i += stride) if (!DATE_LIKE.test(cells[Math.floor(i)] as string)) return null;
  const format = detectDateFormat(cells);
  if (format === null) return null;
  return cells.every((v) => parseDate(v, format) !== null) ? format : null;
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
  // The same memo as parseDate: a panel's series share their dates, and each is built once per series read
  // (the whole upload's analysis, then each series' own); luxon's fromObject was most of a panel's planning.
  const key = parseCache ? `\u0002${coarsest}\u0001${carry}\u0001${row.year}\u0001${row.month}\u0001${row.day}\u0001${row.hour}\u0001${row.minute}` : '';
  const cached = parseCache?.get(key);
  if (cached !== undefined) return cached;
  const result = buildFromParts(row, coarsest, carry);
  parseCache?.set(key, result);
  return result;
}

function buildFromParts(row: PartValues, coarsest: DatePart, carry: number): DateTime | null {
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

/**
 * The sampling interval's name as the status record shows it. Sub-daily steps other than the
 * listed ones are named by their size ("2-hourly", "20-minutely"); "other" = no regular spacing found.
 */
export type Frequency =
  | 'minutely'
  | 'half-hourly'
  | 'hourly'
  | 'daily'
  | 'business daily'
  | 'weekly'
  | 'monthly'
  | 'quarterly'
  | 'half-yearly'
  | 'annual'
  | 'other'
  | `${number}-minutely`
  | `${number}-hourly`
  | `${number}-daily`;

export interface FrequencyInfo {
  frequency: Frequency;
  /** Stepping unit (finest part that varies) and step size in that unit (modal gap between rows). */
  unit: DatePart;
  step: number;
  /** Steps count weekdays only (business-daily data: Friday to Monday is one step). */
  businessDays: boolean;
  /** Seasonal lag in rows for the baseline: the shortest of `periods` rounded, else 1 (= naive last value). */
  season: number;
  /**
   * Every seasonal period of this spacing in steps, ascending: half-hourly [48, 336], hourly [24, 168],
   * daily [7, 365.25], business daily [5, 260.89], weekly [52.18], monthly [12], quarterly [4]; the engine
   * keeps those the known rows hold two cycles of.
   */
  periods: number[];
  /** Future rows generated when the upload has no rows to forecast: one natural cycle (a day of half-hours, a week of days). */
  horizon: number;
}

export const NO_TIME_AXIS: FrequencyInfo = { frequency: 'other', unit: 'day', step: 1, businessDays: false, season: 1, periods: [], horizon: 1 };

const MINUTES_PER_DAY = 1440;
const DAYS_PER_YEAR = 365.25;

/** Name, seasonal periods and default horizon of a regular spacing of `step` `unit`s. */
export function spacing(unit: DatePart, step: number, businessDays = false): Omit<FrequencyInfo, 'unit' | 'step' | 'businessDays' | 'season'> {
  const of = (frequency: Frequency, periods: number[], horizon: number) => ({ frequency, periods, horizon });
  if (unit === 'minute' || unit === 'hour') {
    const minutes = step * (unit === 'hour' ? 60 : 1);
    const name: Frequency =
      unit === 'hour' ? (step === 1 ? 'hourly' : `${step}-hourly`) : step === 1 ? 'minutely' : step === 30 ? 'half-hourly' : `${step}-minutely`;
    // A spacing that divides the day has daily and weekly cycles; the default horizon is one day.
    if (MINUTES_PER_DAY % minutes !== 0) return of(name, [], 1);
    const day = MINUTES_PER_DAY / minutes;
    return of(name, day > 1 ? [day, 7 * day] : [], Math.max(1, day));
  }
  if (unit === 'day') {
    if (businessDays && step === 1) return of('business daily', [5, (DAYS_PER_YEAR * 5) / 7], 5);
    if (step === 1) return of('daily', [7, DAYS_PER_YEAR], 7);
    if (step === 7) return of('weekly', [DAYS_PER_YEAR / 7], 52);
    return of(`${step}-daily`, [], 1);
  }
  if (unit === 'month') {
    if (step === 1) return of('monthly', [12], 12);
    if (step === 3) return of('quarterly', [4], 4);
    if (step === 6) return of('half-yearly', [2], 2);
    if (step === 12) return of('annual', [], 1);
    return of('other', [], 1);
  }
  return of(step === 1 ? 'annual' : 'other', [], 1);
}

/** What the known timestamps told about themselves: duplicates dropped and missing steps (gaps). */
export interface TimeReport {
  duplicates: number;
  missingSteps: number;
}

/**
 * Frequency from the modal positive gap between consecutive known timestamps, measured in `unit` (robust to
 * gaps: a few missing steps do not move the mode). Duplicated/backwards timestamps are ignored for the mode.
 * Daily data with no weekend day and Friday-to-Monday gaps is business daily.
 */
export function detectFrequency(timeline: (DateTime | null)[], unit: DatePart): FrequencyInfo {
  const counts = new Map<number, number>();
  let previous: DateTime | null = null;
  let dated = 0;
  let weekend = 0;
  for (const dt of timeline) {
    if (dt === null) continue;
    dated++;
    if (dt.weekday >= 6) weekend++;
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
  if (best === 0) return { ...NO_TIME_AXIS, unit };
  const businessDays = unit === 'day' && step === 1 && dated >= 10 && weekend === 0 && (counts.get(3) ?? 0) > 0;
  const found = spacing(unit, step, businessDays);
  const season = found.periods.length > 0 ? Math.round(found.periods[0] as number) : 1;
  return { ...found, unit, step, businessDays, season };
}

/** Steps of `axis` from a to b (fractional when b is off the grid). */
export function stepsBetween(a: DateTime, b: DateTime, axis: Pick<FrequencyInfo, 'unit' | 'step' | 'businessDays'>): number {
  if (axis.businessDays) return (businessDayOf(b) - businessDayOf(a)) / axis.step;
  return gapIn(a, b, axis.unit) / axis.step;
}

/** The date `steps` steps of `axis` after dt. */
export function stepFrom(dt: DateTime, axis: Pick<FrequencyInfo, 'unit' | 'step' | 'businessDays'> & { monthEnd?: boolean }, steps: number): DateTime {
  if (!axis.businessDays) return stepDate(dt, axis.unit, steps * axis.step, axis.monthEnd ?? false);
  const target = businessDayOf(dt) + steps * axis.step;
  const days = Math.floor(target / 5) * 7 + (((target % 5) + 5) % 5);
  return MONDAY.plus({ days }).set({ hour: dt.hour, minute: dt.minute, second: dt.second, millisecond: dt.millisecond });
}

/** 1970-01-05 was a Monday: weekdays are counted from it, a weekend day counts as the Monday after. */
const MONDAY = DateTime.fromObject({ year: 1970, month: 1, day: 5 }, { zone: 'utc' });

function businessDayOf(dt: DateTime): number {
  const days = Math.floor((Date.UTC(dt.year, dt.month - 1, dt.day) - MONDAY.toMillis()) / 86_400_000);
  const weeks = Math.floor(days / 7);
  return weeks * 5 + Math.min(days - weeks * 7, 5);
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
