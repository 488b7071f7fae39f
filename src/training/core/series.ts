/**
 * Reading an upload before any model sees it: which rows are known, which are to be forecast, the time axis
 * (date-part columns, a whole-date column, or none) and its frequency. Shared by the forecasting engine
 * (engine.ts) and the legacy network-only path (legacy.ts).
 *
 * Rows whose output cells are ALL empty are rows to forecast. A known row is skipped (invalid) when an output
 * cell is empty or a numeric output, date part or date cell does not parse: it is treated as missing, never
 * imputed. A numeric input's empty or unreadable cell does not cost its row (the output's value is still
 * known): features.ts gives it the column's last value before it (carried forward), and the report says so.
 * An input mostly of numbers with a few text cells is read as numbers, its text cells as missing
 * (MOSTLY_NUMERIC); an input empty in every row is left out (a panel's series without a covariate). `dataRowsToConsider` keeps the most recent N valid known rows; at least MIN_KNOWN_ROWS.
 * Future rows (when nothing is left to forecast): `horizon` rows, one natural cycle of the detected spacing
 * (dates.ts spacing(): a day of half-hours, a week of days, a year of months), stepped from the last known
 * date, other inputs copied from the last known row. Repeated stamps keep their last row; gaps are counted.
 */
import type { DateTime } from 'luxon';
import {
  PART_ORDER,
  NO_TIME_AXIS,
  detectDateFormat,
  detectFrequency,
  finestVaryingPart,
  isMonthEndSeries,
  parseDate,
  stepFrom,
  stepsBetween,
  timelineFromParts,
  type PartValues,
  wholeDateFormat,
  type TimeReport,
} from './dates.js';
import { readPart, type CellReader, type TimeAxisState } from './encoder.js';
import { TrainingError, type ColumnSpec, type TrainingInput } from './types.js';
import { isEmptyCell, parseNumber } from './values.js';

export const MIN_KNOWN_ROWS = 5;

const positiveOr = (n: number | undefined) => (n !== undefined && n > 0 ? n : Infinity);

export function invalid(message: string): TrainingError {
  return new TrainingError('invalid_input', message);
}

export interface Analysis {
  columns: ColumnSpec[];
  readers: CellReader[];
  /** Valid known row indices, chronological, after dataRowsToConsider. */
  known: number[];
  /** Rows to forecast (all output cells empty). */
  forecast: number[];
  timeAxis: TimeAxisState;
  dateFormats: Record<string, string>;
  timeline: (DateTime | null)[];
  /** Duplicate timestamps dropped from `known` and steps missing between known rows (time-ordered uploads). */
  timeReport: TimeReport;
  /**
   * Numeric inputs the user stated as inputs that are empty in every row to forecast: left out of
   * the columns' roles (`ignore`), used through their past only (features.ts, lagged inputs).
   */
  pastInputs: string[];
  /** Inputs empty in every row (known and to forecast): left out (role `ignore`), said in the report. */
  absentInputs: string[];
  /**
   * Inputs stored as text that are mostly numbers (MOSTLY_NUMERIC): read as numbers, the text cells as
   * missing; `rows` are the row indices of the text cells, `samples` a few distinct texts.
   */
  textCells: { column: string; rows: number[]; samples: string[] }[];
}

/**
 * An input is read as numbers when at least this share of its non-empty cells are numbers (and at least
 * MIN_NUMBERS are): a price column with a few `n/a` or `-` cells is a price column, not a category.
 */
export const MOSTLY_NUMERIC = 0.9;
const MIN_NUMBERS = 5;

// ---------------------------------------------------------------------------------------------------------
// Analysis of the upload

export function analyse(input: TrainingInput): Analysis {
  const { header, rows } = input;
  if (!Array.isArray(header) || header.length === 0) throw invalid('The CSV has no header');
  const index = new Map<string, number>();
  header.forEach((name, i) => {
    if (!index.has(name)) index.set(name, i);
  });
  const seen = new Set<string>();
  const columns: ColumnSpec[] = [];
  for (const spec of input.columns) {
    if (!index.has(spec.name)) throw invalid(`Column '${spec.name}' is not in the CSV header`);
    if (seen.has(spec.name)) throw invalid(`Column '${spec.name}' is configured twice`);
    seen.add(spec.name);
    if (spec.role !== 'ignore') columns.push(spec);
  }
  const outputs = columns.filter((c) => c.role === 'output');
  const partColumns = columns.filter((c) => c.role === 'date' && c.datePart);
  let dateColumns = columns.filter((c) => c.role === 'date' && !c.datePart);
  if (outputs.length === 0) throw invalid('At least one output column is required');
  if (!columns.some((c) => c.role === 'input' || c.role === 'date')) {
    throw invalid('At least one input or date column is required');
  }
  const parts = partColumns.map((c) => c.datePart as (typeof PART_ORDER)[number]);
  if (new Set(parts).size !== parts.length) throw invalid('Each date part may be assigned to one column only');

  const readers: CellReader[] = rows.map((row) => (column) => {
    const i = index.get(column);
    return i === undefined ? undefined : row[i];
  });
  const forecast: number[] = [];
  const candidates: number[] = [];
  readers.forEach((read, i) => {
    if (outputs.every((c) => isEmptyCell(read(c.name)))) forecast.push(i);
    else candidates.push(i);
  });

  const textCells = readMostlyNumeric(columns, readers);
  const absentInputs = leaveOutEmptyInputs(columns, readers);
  const pastInputs = promoteEmptyFutureInputs(columns, forecast, readers);

  const dateFormats: Record<string, string> = {};
  if (partColumns.length === 0 && dateColumns.length === 0) {
    // A text input whose every known cell is a whole date is the time axis (dates.ts wholeDateFormat).
    for (const [k, c] of columns.entries()) {
      const format = c.role === 'input' && c.kind === 'categorical' ? wholeDateFormat(candidates.map((i) => (readers[i] as CellReader)(c.name))) : null;
      if (format === null) continue;
      columns[k] = { ...c, role: 'date' };
      dateColumns = [columns[k]];
      dateFormats[c.name] = format;
      break;
    }
  }
  for (const col of dateColumns) {
    if (dateFormats[col.name] !== undefined) continue;
    const format = detectDateFormat(candidates.map((i) => (readers[i] as CellReader)(col.name) ?? ''));
    if (format === null) throw invalid(`Column '${col.name}': unrecognised date format`);
    dateFormats[col.name] = format;
  }

  const valid = candidates.filter((i) => isValidKnownRow(readers[i] as CellReader, columns, dateFormats));
  const limit = Math.min(positiveOr(input.params.dataRowsToConsider), positiveOr(input.params.maxKnownRows));
  let known = valid.length > limit ? valid.slice(valid.length - Math.floor(limit)) : valid;
  if (known.length < MIN_KNOWN_ROWS) {
    throw invalid(`At least ${MIN_KNOWN_ROWS} valid rows with known outputs are needed, found ${known.length}`);
  }

  // Time axis: date-part columns if any, else the first whole-date column, else none.
  let timeline: (DateTime | null)[] = rows.map(() => null);
  let timeAxis: TimeAxisState = {
    ...NO_TIME_AXIS,
    source: 'none',
    partColumns: [],
    dateColumn: null,
    coarsest: null,
    monthEnd: false,
    realDates: false,
  };
  if (partColumns.length > 0) {
    timeline = timelineFromParts(
      readers.map((read) => {
        const values: PartValues = {};
        for (const c of partColumns) {
          const v = readPart(read(c.name));
          if (v === null) return null;
          values[c.datePart as keyof PartValues] = v;
        }
        return values;
      }),
      parts,
    );
    timeAxis = {
      ...timeAxis,
      source: 'parts',
      partColumns: partColumns.map((c) => ({ column: c.name, part: c.datePart as (typeof PART_ORDER)[number] })),
      coarsest: PART_ORDER.find((p) => parts.includes(p)) ?? null,
      realDates: parts.includes('year'),
    };
  } else if (dateColumns[0]) {
    const column = dateColumns[0].name;
    const format = dateFormats[column] as string;
    timeline = readers.map((read) => {
      const cell = read(column);
      return isEmptyCell(cell) ? null : parseDate(cell as string, format);
    });
    timeAxis = { ...timeAxis, source: 'date', dateColumn: { column, format }, realDates: true };
  }
  let timeReport: TimeReport = { duplicates: 0, missingSteps: 0 };
  if (timeAxis.source !== 'none') {
    const knownDates = known.map((i) => timeline[i]).filter((d): d is DateTime => d != null);
    const monthEnd = timeAxis.realDates && isMonthEndSeries(knownDates);
    const unit = monthEnd ? 'month' : finestVaryingPart(knownDates);
    timeAxis = { ...timeAxis, ...detectFrequency(known.map((i) => timeline[i] ?? null), unit), monthEnd };
    const deduplicated = dropDuplicateStamps(known, timeline);
    if (deduplicated.length < known.length && deduplicated.length >= MIN_KNOWN_ROWS) {
      timeReport = { ...timeReport, duplicates: known.length - deduplicated.length };
      known = deduplicated;
    }
    timeReport = { ...timeReport, missingSteps: missingSteps(known, timeline, timeAxis) };
  }
  return { columns, readers, known, forecast, timeAxis, dateFormats, timeline, timeReport, pastInputs, absentInputs, textCells };
}

/**
 * An input stored as text (categorical) whose non-empty cells are mostly numbers: a few `n/a`, `-` or typos
 * among prices made the whole column a category (one-hot over its prices). Read as numbers, its text cells
 * as missing (features.ts carries the column's last value forward into them). Answers the text cells.
 */
function readMostlyNumeric(columns: ColumnSpec[], readers: CellReader[]): Analysis['textCells'] {
  const found: Analysis['textCells'] = [];
  for (const [k, c] of columns.entries()) {
    if (c.role !== 'input' || c.kind !== 'categorical') continue;
    let numbers = 0;
    const texts: number[] = [];
    readers.forEach((read, i) => {
      const cell = read(c.name);
      if (isEmptyCell(cell)) return;
      if (parseNumber(cell) === null) texts.push(i);
      else numbers++;
    });
    if (texts.length === 0 || numbers < MIN_NUMBERS || numbers < MOSTLY_NUMERIC * (numbers + texts.length)) continue;
    columns[k] = { ...c, kind: 'numeric' };
    const samples = [...new Set(texts.map((i) => String((readers[i] as CellReader)(c.name)).trim()))].slice(0, 3);
    found.push({ column: c.name, rows: texts, samples });
  }
  return found;
}

/** A numeric input's cell holds no number (empty, or text in a mostly numeric column). */
export const noNumber = (cell: string | null | undefined) => parseNumber(cell) === null;

/**
 * An input with nothing in any row (a panel's series the covariate was never filled for) has nothing to
 * teach or to forecast with: left out (role `ignore`) and said, rather than forecast as an output of its own
 * with no known value (which left the whole series without a model).
 */
function leaveOutEmptyInputs(columns: ColumnSpec[], readers: CellReader[]): string[] {
  const absent: string[] = [];
  if (readers.length === 0) return absent;
  for (const [k, c] of columns.entries()) {
    if (c.role !== 'input') continue;
    const empty = c.kind === 'numeric' ? noNumber : isEmptyCell;
    if (!readers.every((read) => empty(read(c.name)))) continue;
    columns[k] = { ...c, role: 'ignore' };
    absent.push(c.name);
  }
  return absent;
}

/**
 * Of a panel's series (`members`: each series' row indices), the inputs filled in some series and empty in
 * every row of others, one sentence each naming those series (at most MAX_NAMED, then how many more).
 */
export function inputsMissingInSeries(input: TrainingInput, members: { key: string[]; rows: number[] }[], keys: string[]): string[] {
  const notes: string[] = [];
  for (const c of input.columns) {
    if (c.role !== 'input' || keys.includes(c.name)) continue;
    const at = input.header.indexOf(c.name);
    if (at < 0) continue;
    const empty = c.kind === 'numeric' ? noNumber : isEmptyCell;
    const without = members.filter((m) => m.rows.every((i) => empty((input.rows[i] as (string | null)[])[at])));
    if (without.length === 0 || without.length === members.length) continue;
    const names = without.map((m) => m.key.join(' x ') || "''");
    notes.push(`input '${c.name}' is empty in every row of ${without.length} of the ${members.length} series (${namedList(names)}): those series are forecast without it`);
  }
  return notes;
}

/** How many rows, dates or series a sentence names before `and N more`. */
export const MAX_NAMED = 5;

/** `a, b and c`, or `a, b, c, d, e and 7 more`. */
export function namedList(names: string[]): string {
  if (names.length <= MAX_NAMED) return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return `${names.slice(0, MAX_NAMED).join(', ')} and ${names.length - MAX_NAMED} more`;
}

/**
 * How a sentence names rows of the upload: their dates on a calendar time axis (as precise as its spacing),
 * else their row numbers (1 = the first row under the header).
 */
export function rowNames(analysis: Analysis, rows: number[]): string {
  const format = analysis.timeAxis.realDates ? DATE_LABEL[analysis.timeAxis.unit] : undefined;
  const names = rows.map((i) => {
    const date = analysis.timeline[i];
    return format && date ? date.toFormat(format) : `row ${i + 1}`;
  });
  return namedList(names);
}

const DATE_LABEL: Record<string, string> = { year: 'yyyy', month: 'yyyy-MM', day: 'yyyy-MM-dd', hour: 'yyyy-MM-dd HH:mm', minute: 'yyyy-MM-dd HH:mm' };

/**
 * A numeric input empty in every row to forecast has no future to feed a model: mean-filling it (the old
 * rule) forecast with a made-up value (a wide `male,female` upload forecast `female` 3.2x worse
 * than its seasonal naive and left `male` empty). Unless the user stated it an input, it is forecast as an
 * output of its own; a stated input gets the role `ignore` (its cells neither features nor checked in the
 * known rows) and is named in the answer, to be used through its past only (features.ts, lagged inputs).
 */
function promoteEmptyFutureInputs(columns: ColumnSpec[], forecast: number[], readers: CellReader[]): string[] {
  const pastInputs: string[] = [];
  if (forecast.length === 0) return pastInputs;
  for (const [k, c] of columns.entries()) {
    if (c.role !== 'input' || c.kind !== 'numeric') continue;
    if (!forecast.every((i) => noNumber((readers[i] as CellReader)(c.name)))) continue;
    columns[k] = { ...c, role: c.stated ? 'ignore' : 'output' };
    if (c.stated) pastInputs.push(c.name);
  }
  return pastInputs;
}

/**
 * A series whose stamps never go backwards but repeat (a logger writing twice, a DST hour exported in local
 * time) keeps the last row of each stamp, the latest reading; stamps that go backwards are several series in
 * one file, which stay as they are (tabular). Returns `known` unchanged when there is nothing to drop.
 */
function dropDuplicateStamps(known: number[], timeline: (DateTime | null)[]): number[] {
  const millis = known.map((i) => timeline[i]?.toMillis() ?? null);
  if (millis.some((m) => m === null)) return known;
  let repeats = 0;
  for (let k = 1; k < millis.length; k++) {
    const gap = (millis[k] as number) - (millis[k - 1] as number);
    if (gap < 0) return known;
    if (gap === 0) repeats++;
  }
  if (repeats === 0) return known;
  return known.filter((_, k) => k === millis.length - 1 || millis[k] !== millis[k + 1]);
}

/** Steps of the detected spacing with no known row between the first and the last known row. */
function missingSteps(known: number[], timeline: (DateTime | null)[], axis: TimeAxisState): number {
  let missing = 0;
  for (let k = 1; k < known.length; k++) {
    const a = timeline[known[k - 1] as number];
    const b = timeline[known[k] as number];
    if (!a || !b) continue;
    const steps = Math.round(stepsBetween(a, b, axis));
    if (steps > 1) missing += steps - 1;
  }
  return missing;
}

function isValidKnownRow(read: CellReader, columns: ColumnSpec[], dateFormats: Record<string, string>): boolean {
  for (const c of columns) {
    const cell = read(c.name);
    if (c.role === 'output') {
      if (isEmptyCell(cell)) return false;
      if (c.kind === 'numeric' && parseNumber(cell) === null) return false;
    } else if (c.role === 'date') {
      if (c.datePart ? readPart(cell) === null : isEmptyCell(cell) || parseDate(cell as string, dateFormats[c.name] as string) === null) {
        return false;
      }
    }
  }
  return true;
}

/** Future rows when nothing is left to forecast: see the module comment (step 5). */
export function futureRows(input: TrainingInput, analysis: Analysis): (string | null)[][] {
  const lastIndex = analysis.known[analysis.known.length - 1] as number;
  const last = input.rows[lastIndex] as (string | null)[];
  const lastDate = analysis.timeline[lastIndex] ?? null;
  const axis = analysis.timeAxis;
  const specs = new Map(analysis.columns.map((c) => [c.name, c]));
  const lastDates = new Map<string, DateTime | null>();
  for (const [column, format] of Object.entries(analysis.dateFormats)) {
    const i = input.header.indexOf(column);
    const cell = last[i];
    lastDates.set(column, isEmptyCell(cell) ? null : parseDate(cell as string, format));
  }
  const result: (string | null)[][] = [];
  for (let k = 1; k <= axis.horizon; k++) {
    const date = lastDate ? stepFrom(lastDate, axis, k) : null;
    result.push(
      input.header.map((name, i) => {
        const spec = specs.get(name);
        if (!spec || spec.role === 'output') return '';
        if (spec.role === 'date' && spec.datePart) return date ? String(date[spec.datePart]) : (last[i] ?? '');
        if (spec.role === 'date') {
          const base = lastDates.get(name) ?? null;
          const format = analysis.dateFormats[name] as string;
          return base && axis.source !== 'none' ? stepFrom(base, axis, k).toFormat(format) : (last[i] ?? '');
        }
        return last[i] ?? '';
      }),
    );
  }
  return result;
}


/**
 * Position of each row on the time axis in steps of the detected frequency, counted from `origin`; null
 * for rows without a date. Rounded: month-end and DST wobble stay on their step.
 */
export function timeIndex(analysis: Analysis, origin: DateTime): (number | null)[] {
  return analysis.timeline.map((date) => (date ? Math.round(stepsBetween(origin, date, analysis.timeAxis)) : null));
}
