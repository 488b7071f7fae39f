/**
 * Which CSV columns a stored model reads and which it predicts, for callers outside the engine (POST
 * /forecasts.php checks the posted cells against them). The one reader of a model's internals besides
 * predict(), so no other module depends on a model version's layout.
 */
import type { EncoderState } from '../core/encoder.js';
import type { EngineState } from '../series/forecaster.js';
import { isPanelState } from '../panel/panel-predict.js';
import type { TrainedModel } from '../core/types.js';

export interface ModelColumns {
  /** Input and date columns the model reads. */
  inputs: string[];
  /** Output columns it predicts. */
  outputs: string[];
}

function ofEncoder(encoder: EncoderState): ModelColumns {
  const inputs = new Set(encoder.inputs.map((feature) => feature.column));
  for (const part of encoder.timeAxis.partColumns) inputs.add(part.column);
  if (encoder.timeAxis.dateColumn) inputs.add(encoder.timeAxis.dateColumn.column);
  return { inputs: [...inputs], outputs: encoder.outputs.map((target) => target.column) };
}

/** undefined when the model does not say (then callers let predict() decide). */
export function modelColumns(model: TrainedModel): ModelColumns | undefined {
  if (model.version === 1) {
    const encoder = model.encoder as EncoderState | null;
    return encoder?.version === 1 ? ofEncoder(encoder) : undefined;
  }
  if (isPanelState(model.engine)) return { inputs: [...model.engine.inputColumns], outputs: [...model.engine.outputs] };
  const engine = model.engine as Partial<EngineState> | null;
  if (!engine?.inputColumns || !engine.outputs) return undefined;
  return { inputs: [...engine.inputColumns], outputs: engine.outputs.map((o) => o.column) };
}
