/**
 * The stored form of a panel's model (panel.ts) and its predictor: one engine state per series,
 * found by the row's key cells, so POST /forecasts.php predicts each posted row with its own series' model.
 */
import { predictRows, type EngineState, type PredictedRow, type RowToPredict } from '../series/forecaster.js';
import { TrainingError, type TrainingParams } from '../core/types.js';

/** The stored model of a panel: one engine state per series, found by its key. */
export interface PanelState {
  version: 1;
  kind: 'panel';
  keys: string[];
  /** Every column any series' model reads (keys included) and every output it predicts. */
  inputColumns: string[];
  outputs: string[];
  series: PanelSeriesState[];
}

export interface PanelSeriesState {
  key: string[];
  engine: EngineState | null;
  /** A series too short for a model: its last known value per output, carried forward. */
  carried?: Record<string, string>;
}

export const isPanelState = (engine: unknown): engine is PanelState => (engine as { kind?: unknown } | null)?.kind === 'panel';

/** One map key for a series' key values. */
export const keyOf = (values: readonly string[]) => JSON.stringify(values);


/** Rows of any series, in the order given; a row whose key names no series of the model is refused. */
export function predictPanel(state: PanelState, params: TrainingParams, header: string[], rows: RowToPredict[]): PredictedRow[] {
  const byKey = new Map(state.series.map((s) => [keyOf(s.key), s]));
  const results = new Array<PredictedRow>(rows.length);
  const batches = new Map<PanelSeriesState, number[]>();
  rows.forEach((row, i) => {
    const key = state.keys.map((k) => (row.read(k) ?? '').trim());
    const series = byKey.get(keyOf(key));
    if (!series) throw new TrainingError('invalid_input', `No series ${state.keys.map((k, j) => `${k}=${key[j] ?? ''}`).join(', ')} in this model`);
    let batch = batches.get(series);
    if (!batch) batches.set(series, (batch = []));
    batch.push(i);
  });
  for (const [series, indices] of batches) {
    if (series.engine) {
      const predicted = predictRows(series.engine, params, header, indices.map((i) => rows[i] as RowToPredict));
      indices.forEach((i, k) => (results[i] = predicted[k] as PredictedRow));
      continue;
    }
    for (const i of indices) {
      const values: Record<string, string> = {};
      for (const name of header) values[name] = (rows[i] as RowToPredict).read(name) ?? '';
      Object.assign(values, series.carried ?? {});
      results[i] = { values };
    }
  }
  return results;
}
