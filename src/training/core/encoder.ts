/**
 * Feature encoding. The fitted EncoderState is plain JSON (stored in TrainedModel.encoder) so a model
 * reloaded from the database encodes new rows exactly like the worker did.
 *
 * Inputs:
 *  - numeric input: min-max scaled into [-1, 1] with the fit rows' min/max (constant column -> always 0);
 *    missing/non-numeric cell (a known row's too) -> the fit rows' mean. Centred inputs suit the tanh network:
 *    on the benchmark, [0, 1] inputs left brain stuck on a plateau (validation MSE ~1.0 vs ~0.1 centred).
 *  - categorical input: one-hot over the categories seen in the fit rows (sorted); unknown/empty -> all 0.
 *  - date part column (year/month/day/hour/minute): the value min-max scaled, plus sin/cos(2*pi*v/P) with
 *    P = 12 (month), 31 (day), 24 (hour), 60 (minute); year is only scaled.
 *  - whole-date column: the same features for every part that varies in the fit rows.
 *  - weekday sin/cos(2*pi*weekday/7) when the series is daily or finer and real dates are known, because a
 *    weekly pattern cannot be derived from year/month/day values by the network.
 * Outputs:
 *  - numeric output: min-max scaled into [OUTPUT_LOW, OUTPUT_HIGH] = [-0.8, 0.8], inside the (-1, 1) range of
 *    the tanh output layer, and scaled back on decode.
 *  - categorical output: one-hot with OUTPUT_LOW for "no" and OUTPUT_HIGH for "yes"; decode = argmax.
 */
import { DateTime } from 'luxon';
import type { ColumnSpec, DatePart } from './types.js';
import { PART_ORDER, PART_PERIOD, dateFromParts, parseDate, type FrequencyInfo } from './dates.js';
import { countDecimals, isEmptyCell, parseNumber } from './values.js';

/**
 * Activation of every brain layer. tanh rather than brain's default sigmoid: zero-centred units converge
 * much faster with brain's plain per-sample SGD (bench/train: validation MSE 0.09-0.12 vs 0.12-0.19 for the
 * best sigmoid setting, same epochs).
 */
export const ACTIVATION = 'tanh' as const;
/**
 * Numeric targets are mapped into [-0.8, 0.8] rather than the full (-1, 1): tanh only reaches +-1
 * asymptotically, and the headroom lets forecasts go somewhat beyond the training range (trends).
 */
export const OUTPUT_LOW = -0.8;
export const OUTPUT_HIGH = 0.8;

interface Stats {
  min: number;
  max: number;
  mean: number;
}

export type InputFeature =
  | ({ type: 'numeric'; column: string } & Stats)
  | { type: 'categorical'; column: string; categories: string[] }
  | ({ type: 'part'; column: string; part: DatePart } & Stats)
  | { type: 'date'; column: string; format: string; parts: ({ part: DatePart } & Stats)[] };

export type OutputTarget =
  | { type: 'numeric'; column: string; min: number; max: number; decimals: number }
  | { type: 'categorical'; column: string; categories: string[] };

export interface TimeAxisState extends FrequencyInfo {
  /** Where timestamps come from: date-part columns, one whole-date column, or nothing. */
  source: 'parts' | 'date' | 'none';
  partColumns: { column: string; part: DatePart }[];
  dateColumn: { column: string; format: string } | null;
  /** Coarsest present part (date-part source); parts above it are virtual (see dates.timelineFromParts). */
  coarsest: DatePart | null;
  monthEnd: boolean;
  /** Real calendar dates are known (weekday is meaningful). */
  realDates: boolean;
}

export interface EncoderState {
  version: 1;
  /** Target range the network was trained on (stored so old models decode correctly if defaults change). */
  outputLow: number;
  outputHigh: number;
  inputs: InputFeature[];
  outputs: OutputTarget[];
  timeAxis: TimeAxisState;
  weekday: boolean;
  inputSize: number;
  outputSize: number;
}

/** Reads a raw cell by column name; lets the same encoder serve header-aligned arrays and records. */
export type CellReader = (column: string) => string | null | undefined;

export type OutputValue = number | string;

export function featureWidth(feature: InputFeature): number {
  switch (feature.type) {
    case 'numeric':
      return 1;
    case 'categorical':
      return feature.categories.length;
    case 'part':
      return feature.part === 'year' ? 1 : 3;
    case 'date':
      return feature.parts.reduce((sum, p) => sum + (p.part === 'year' ? 1 : 3), 0);
  }
}

function stats(values: number[]): Stats {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
  }
  return values.length === 0 ? { min: 0, max: 0, mean: 0 } : { min, max, mean: sum / values.length };
}

/** Min-max into [-1, 1]; a constant column carries no information and encodes as 0. */
function scale(value: number, s: { min: number; max: number }): number {
  const range = s.max - s.min;
  return range > 0 ? (2 * (value - s.min)) / range - 1 : 0;
}

export function readPart(cell: string | null | undefined): number | null {
  const n = parseNumber(cell);
  return n !== null && Number.isInteger(n) ? n : null;
}

/** Fits the encoder on known rows that have already been validated (every needed cell parses, but numeric inputs' cells may hold no number). */
export function fitEncoder(
  columns: ColumnSpec[],
  rows: CellReader[],
  timeAxis: TimeAxisState,
  /** Detected format of every whole-date column (analysis step). */
  dateFormats: Record<string, string>,
): EncoderState {
  const inputs: InputFeature[] = [];
  const outputs: OutputTarget[] = [];
  for (const col of columns) {
    const cells = rows.map((read) => read(col.name));
    if (col.role === 'input' && col.kind === 'numeric') {
      // A known row's input cell may hold no number (series.ts keeps the row): the stats are of the numbers.
      inputs.push({ type: 'numeric', column: col.name, ...stats(cells.map((c) => parseNumber(c)).filter((v): v is number => v !== null)) });
    } else if (col.role === 'input') {
      const categories = [...new Set(cells.filter((c) => !isEmptyCell(c)).map((c) => (c as string).trim()))];
      inputs.push({ type: 'categorical', column: col.name, categories: categories.sort() });
    } else if (col.role === 'date' && col.datePart) {
      inputs.push({ type: 'part', column: col.name, part: col.datePart, ...stats(cells.map((c) => readPart(c) as number)) });
    } else if (col.role === 'date') {
      const format = dateFormats[col.name];
      if (format === undefined) continue;
      const dates = cells.map((c) => parseDate(c as string, format) as DateTime);
      const parts = PART_ORDER.filter((part) => dates.some((d) => d[part] !== dates[0]?.[part])).map((part) => ({
        part,
        ...stats(dates.map((d) => d[part])),
      }));
      inputs.push({ type: 'date', column: col.name, format, parts });
    } else if (col.role === 'output' && col.kind === 'numeric') {
      const s = stats(cells.map((c) => parseNumber(c) as number));
      const decimals = cells.reduce((m, c) => Math.max(m, countDecimals(c ?? '')), 0);
      outputs.push({ type: 'numeric', column: col.name, min: s.min, max: s.max, decimals });
    } else if (col.role === 'output') {
      const categories = [...new Set(cells.map((c) => (c ?? '').trim()))].sort();
      outputs.push({ type: 'categorical', column: col.name, categories });
    }
  }
  const weekday =
    timeAxis.realDates && (timeAxis.unit === 'day' || timeAxis.unit === 'hour' || timeAxis.unit === 'minute');
  const inputSize = inputs.reduce((sum, f) => sum + featureWidth(f), 0) + (weekday ? 2 : 0);
  const outputSize = outputs.reduce((sum, t) => sum + (t.type === 'numeric' ? 1 : t.categories.length), 0);
  return { version: 1, outputLow: OUTPUT_LOW, outputHigh: OUTPUT_HIGH, inputs, outputs, timeAxis, weekday, inputSize, outputSize };
}

function pushPart(x: Float32Array, at: number, part: DatePart, value: number | null, s: Stats): number {
  const v = value ?? s.mean;
  x[at++] = scale(v, s);
  if (part === 'year') return at;
  const angle = (2 * Math.PI * v) / PART_PERIOD[part];
  // An unreadable cell contributes the scaled mean and a neutral (0, 0) phase.
  x[at++] = value === null ? 0 : Math.sin(angle);
  x[at++] = value === null ? 0 : Math.cos(angle);
  return at;
}

/** Calendar date of a row, for the weekday feature; null when unknown. */
export function rowDate(state: EncoderState, read: CellReader): DateTime | null {
  const axis = state.timeAxis;
  if (axis.source === 'date' && axis.dateColumn) {
    const cell = read(axis.dateColumn.column);
    return isEmptyCell(cell) ? null : parseDate(cell as string, axis.dateColumn.format);
  }
  if (axis.source === 'parts') {
    const parts: Partial<Record<DatePart, number>> = {};
    for (const { column, part } of axis.partColumns) {
      const v = readPart(read(column));
      if (v === null) return null;
      parts[part] = v;
    }
    return dateFromParts(parts, axis.coarsest ?? 'year', 0);
  }
  return null;
}

export function encodeInputs(state: EncoderState, read: CellReader): Float32Array {
  const x = new Float32Array(state.inputSize);
  let at = 0;
  for (const f of state.inputs) {
    const cell = read(f.column);
    if (f.type === 'numeric') {
      x[at++] = scale(parseNumber(cell) ?? f.mean, f);
    } else if (f.type === 'categorical') {
      const index = isEmptyCell(cell) ? -1 : f.categories.indexOf((cell as string).trim());
      if (index >= 0) x[at + index] = 1;
      at += f.categories.length;
    } else if (f.type === 'part') {
      at = pushPart(x, at, f.part, readPart(cell), f);
    } else {
      const dt = isEmptyCell(cell) ? null : parseDate(cell as string, f.format);
      for (const p of f.parts) at = pushPart(x, at, p.part, dt ? dt[p.part] : null, p);
    }
  }
  if (state.weekday) {
    const dt = rowDate(state, read);
    const angle = dt ? (2 * Math.PI * (dt.weekday - 1)) / 7 : 0;
    x[at] = dt ? Math.sin(angle) : 0;
    x[at + 1] = dt ? Math.cos(angle) : 0;
  }
  return x;
}

/** Actual output values of a validated known row (numbers for numeric outputs, trimmed class otherwise). */
export function readOutputs(state: EncoderState, read: CellReader): OutputValue[] {
  return state.outputs.map((t) =>
    t.type === 'numeric' ? (parseNumber(read(t.column)) as number) : (read(t.column) ?? '').trim(),
  );
}

export function encodeOutputs(state: EncoderState, values: OutputValue[]): Float32Array {
  const { outputLow: low, outputHigh: high } = state;
  const y = new Float32Array(state.outputSize);
  let at = 0;
  state.outputs.forEach((t, i) => {
    if (t.type === 'numeric') {
      const range = t.max - t.min;
      const unit = range > 0 ? ((values[i] as number) - t.min) / range : 0.5;
      y[at++] = low + unit * (high - low);
    } else {
      const index = t.categories.indexOf(values[i] as string);
      for (let k = 0; k < t.categories.length; k++) y[at + k] = k === index ? high : low;
      at += t.categories.length;
    }
  });
  return y;
}

export function decodeOutputs(state: EncoderState, y: ArrayLike<number>): OutputValue[] {
  let at = 0;
  return state.outputs.map((t) => {
    if (t.type === 'numeric') {
      const unit = ((y[at++] ?? 0) - state.outputLow) / (state.outputHigh - state.outputLow);
      return t.min + unit * (t.max - t.min);
    }
    let best = 0;
    for (let k = 1; k < t.categories.length; k++) if ((y[at + k] ?? 0) > (y[at + best] ?? 0)) best = k;
    at += t.categories.length;
    return t.categories[best] ?? '';
  });
}
