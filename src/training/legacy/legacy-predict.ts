/**
 * Prediction with a version-1 stored model (one brain.js network on the encoder's scaled features), and the
 * reading of the rows every predictor is handed. Below the legacy procedure, which forecasts with its own
 * freshly stored model through it, and below predict.ts, which picks the predictor by model version.
 */
import { loadNetwork, type NetworkLike } from './brain-network.js';
import {
  decodeOutputs,
  encodeInputs,
  type CellReader,
  type EncoderState,
  type OutputValue,
} from '../core/encoder.js';
import { adjustForecast } from '../core/postprocess.js';
import { TrainingError, type TrainedModel, type TrainedModelV1 } from '../core/types.js';
import { formatNumber } from '../core/values.js';

export function asEncoderState(model: TrainedModel): EncoderState {
  const encoder = model.version === 1 ? (model.encoder as EncoderState | null) : null;
  if (!encoder || encoder.version !== 1) {
    throw new TrainingError('invalid_input', 'Unsupported trained model version');
  }
  return encoder;
}


/**
 * brain gets plain arrays (of float32-rounded values, exactly what it trains on): a typed array would make
 * brain build an index lookup table for it and convert every input through it on run().
 */
export function encodeRow(encoder: EncoderState, read: CellReader): number[] {
  return Array.from(encodeInputs(encoder, read));
}

/** Raw (unadjusted, unrounded) model outputs for one row. */
export function runRow(net: NetworkLike, encoder: EncoderState, read: CellReader): OutputValue[] {
  return decodeOutputs(encoder, net.run(encodeRow(encoder, read)));
}

export function runEncoded(net: NetworkLike, encoder: EncoderState, input: number[]): OutputValue[] {
  return decodeOutputs(encoder, net.run(input));
}

export type RowsIn = Record<string, string>[] | (string | null)[][];

export function readersOf(header: string[], rows: RowsIn): CellReader[] {
  const index = new Map<string, number>();
  header.forEach((name, i) => {
    if (!index.has(name)) index.set(name, i);
  });
  return rows.map((row) =>
    Array.isArray(row)
      ? (column: string) => {
          const i = index.get(column);
          return i === undefined ? undefined : row[i];
        }
      : (column: string) => row[column],
  );
}

/** Every header cell copied (null -> '') plus every output column filled with the formatted forecast. */
export function predictLegacy(model: TrainedModelV1, header: string[], readers: CellReader[]): Record<string, string>[] {
  const encoder = asEncoderState(model);
  const net = loadNetwork(model.network);
  return readers.map((read) => {
    const values = runRow(net, encoder, read);
    const out: Record<string, string> = {};
    for (const name of header) out[name] = read(name) ?? '';
    encoder.outputs.forEach((target, i) => {
      const value = values[i] as OutputValue;
      out[target.column] =
        target.type === 'numeric'
          ? formatNumber(adjustForecast(value as number, model.params), target.decimals)
          : (value as string);
    });
    return out;
  });
}
