/**
 * The stored form of an engine-trained model (TrainedModelV2.engine) and the one function that predicts
 * with it. The worker produces its forecasts by calling predictRows() on the JSON round-tripped model, so a
 * model reloaded after a restart predicts exactly what the job wrote.
 *
 * Rows are placed on the time axis from their own date cells. Rows without a usable date (no date column,
 * or date parts without a year, whose year the upload only implied) are taken as the next steps after the
 * last known row, in the order given. A stated input with no future is read from the known values
 * stored with the model, at the row's time minus its lag, never from the row's own cells.
 */
import { DateTime } from 'luxon';
import { dateFromParts, parseDate, stepsBetween, type Frequency } from '../core/dates.js';
import { readPart, type CellReader } from '../core/encoder.js';
import { featuresOf, type FeatureSpaceState } from '../core/features.js';
import { widthAt, type IntervalWidths } from '../selection/intervals.js';
import { familyNamed } from '../models/candidates.js';
import type { FittedModel, OutputKind, PredictRows } from '../models/model.js';
import { adjustForecast } from '../core/postprocess.js';
import { combineRow } from '../selection/selection.js';
import { TrainingError, type DatePart, type ForecastInterval, type TrainingParams } from '../core/types.js';
import { formatNumber, isEmptyCell } from '../core/values.js';

export interface SeriesState {
  timeOrdered: boolean;
  source: 'parts' | 'date' | 'none';
  dateColumn: { column: string; format: string } | null;
  partColumns: { column: string; part: DatePart }[];
  coarsest: DatePart | null;
  realDates: boolean;
  unit: DatePart;
  step: number;
  monthEnd: boolean;
  frequency: Frequency;
  /** Steps count weekdays only; absent in models stored before steps could skip weekends. */
  businessDays?: boolean;
  season: number;
  /** The seasonal periods the families were given; absent in models stored before a series had more than one. */
  periods?: number[];
  horizon: number;
  /** ISO date of time 0 (the first known row), null without dates. */
  origin: string | null;
  lastTime: number;
}

export interface OutputState {
  column: string;
  kind: OutputKind;
  decimals: number;
  members: { family: string; weight: number; state: unknown }[];
  /** 'median': the members' median at each row instead of their weighted sum (absent in earlier models). */
  combine?: 'median';
  widths: IntervalWidths | null;
}

export interface EngineState {
  version: 1;
  series: SeriesState;
  features: FeatureSpaceState;
  /** Columns a prediction reads (inputs and dates) and writes (outputs). */
  inputColumns: string[];
  outputs: OutputState[];
}

/** A row to predict: its cells, and (from the engine) its known date and time; undefined = derive from cells. */
export interface RowToPredict {
  read: CellReader;
  date?: DateTime | null;
  time?: number;
}

export interface PredictedRow {
  values: Record<string, string>;
  intervals?: Record<string, ForecastInterval>;
}

/** Calendar date of a row from its own cells (null when the row cannot be placed). */
export function rowDateOf(series: SeriesState, read: CellReader): DateTime | null {
  if (series.source === 'date' && series.dateColumn) {
    const cell = read(series.dateColumn.column);
    return isEmptyCell(cell) ? null : parseDate(cell as string, series.dateColumn.format);
  }
  if (series.source === 'parts' && series.realDates) {
    const parts: Partial<Record<DatePart, number>> = {};
    for (const { column, part } of series.partColumns) {
      const v = readPart(read(column));
      if (v === null) return null;
      parts[part] = v;
    }
    return dateFromParts(parts, series.coarsest ?? 'year', 0);
  }
  return null;
}

export function timeOf(series: SeriesState, date: DateTime | null): number | null {
  if (!date || series.origin === null) return null;
  const origin = DateTime.fromISO(series.origin, { zone: 'utc' });
  return Math.round(stepsBetween(origin, date, { unit: series.unit, step: series.step, businessDays: series.businessDays ?? false }));
}

const revived = new WeakMap<OutputState, FittedModel[]>();

function membersOf(output: OutputState): FittedModel[] {
  let fitted = revived.get(output);
  if (!fitted) {
    fitted = output.members.map((m) => familyNamed(output.kind, m.family).revive(m.state));
    revived.set(output, fitted);
  }
  return fitted;
}

/** The rows as the families read them: each placed on the time axis, with its features. */
export function familyRows(state: Pick<EngineState, 'series' | 'features'>, rows: RowToPredict[]): PredictRows {
  const { series } = state;
  let next = series.lastTime;
  const placed = rows.map((row) => {
    const date = row.date !== undefined ? row.date : rowDateOf(series, row.read);
    const time = row.time ?? timeOf(series, date) ?? ++next;
    return { date, time };
  });
  return {
    time: placed.map((p) => p.time),
    features: rows.map((row, i) => {
      const { date, time } = placed[i] as { date: DateTime | null; time: number };
      return featuresOf(state.features, row.read, date, time);
    }),
  };
}

export function predictRows(state: EngineState, params: TrainingParams, header: string[], rows: RowToPredict[]): PredictedRow[] {
  if (state.version !== 1) throw new TrainingError('invalid_input', 'Unsupported trained model version');
  const { series } = state;
  const input = familyRows(state, rows);
  const results: PredictedRow[] = rows.map((row) => {
    const values: Record<string, string> = {};
    for (const name of header) values[name] = row.read(name) ?? '';
    return { values };
  });
  for (const output of state.outputs) {
    const fitted = membersOf(output);
    const predictions = fitted.map((model) => model.predict(input));
    const weights = output.members.map((m) => m.weight);
    rows.forEach((_, i) => {
      const result = results[i] as PredictedRow;
      if (output.kind === 'categorical') {
        result.values[output.column] = (predictions[0] as string[])[i] as string;
        return;
      }
      const raw = combineRow(
        predictions.map((p) => (p as number[])[i] as number),
        weights,
        output.combine,
      );
      const format = (v: number) => formatNumber(adjustForecast(v, params), output.decimals);
      result.values[output.column] = format(raw);
      if (output.widths) {
        const { w80, w95 } = widthAt(output.widths, (input.time[i] as number) - series.lastTime);
        (result.intervals ??= {})[output.column] = {
          lo80: format(raw - w80),
          hi80: format(raw + w80),
          lo95: format(raw - w95),
          hi95: format(raw + w95),
        };
      }
    });
  }
  return results;
}
