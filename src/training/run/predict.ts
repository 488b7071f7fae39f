/**
 * predict(): runs a stored TrainedModel on rows. Pure and synchronous (small forward passes), so it is fine
 * on the main thread; the worker uses the very same function on the serialized model to produce
 * TrainingResult.forecasts, which is why a JSON round trip of the model reproduces them exactly.
 */
import { predictRows, type EngineState, type PredictedRow } from '../series/forecaster.js';
import { predictLegacy, readersOf, type RowsIn } from '../legacy/legacy-predict.js';
import { isPanelState, predictPanel } from '../panel/panel-predict.js';
import type { TrainedModel } from '../core/types.js';
export { adjustForecast } from '../core/postprocess.js';

/**
 * Predicts the output columns of `rows`. Rows are either arrays aligned with `header` or records keyed by
 * column name. Each result row has every header column (input cells copied, null -> '') plus every output
 * column, filled with the formatted forecast. Missing/non-numeric input cells are imputed.
 */
export function predict(model: TrainedModel, header: string[], rows: RowsIn): Record<string, string>[] {
  return predictWithIntervals(model, header, rows).map((row) => row.values);
}

/** predict(), plus the 80/95% interval bounds of numeric outputs for engine-trained (v2) models. */
export function predictWithIntervals(model: TrainedModel, header: string[], rows: RowsIn): PredictedRow[] {
  const readers = readersOf(header, rows);
  if (model.version === 2) {
    if (isPanelState(model.engine)) return predictPanel(model.engine, model.params, header, readers.map((read) => ({ read })));
    return predictRows(model.engine as EngineState, model.params, header, readers.map((read) => ({ read })));
  }
  return predictLegacy(model, header, readers).map((values) => ({ values }));
}
