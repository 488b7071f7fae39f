/**
 * predict(): runs a stored TrainedModel on rows. Pure and synchronous (small forward passes), so it is fine
 * on the main thread; the worker uses the very same function on the serialized model to produce
 * TrainingResult.forecasts, which is why a JSON round trip of the model reproduces them exactly.
 */
import brain from 'brain.js';
import type { INeuralNetworkJSON } from 'brain.js';
import {
  decodeOutputs,
  encodeInputs,
  type CellReader,
  type EncoderState,
  type OutputValue,
} from './encoder.js';
import { predictRows, type EngineState, type PredictedRow } from './forecaster.js';
import { TrainingError, type TrainedModel } from './types.js';
export { adjustForecast } from './postprocess.js';
import { adjustForecast } from './postprocess.js';
import { formatNumber } from './values.js';

export type NetworkLike = { run(input: ArrayLike<number>): ArrayLike<number> };

export function loadNetwork(json: unknown): NetworkLike {
  const source = json as INeuralNetworkJSON;
  // brain's fromJSON adopts json.trainOpts by reference and fills in defaults (timeout: Infinity, which
  // JSON turns into null and fromJSON then rejects), so hand it a cleaned copy and keep the model pristine.
  const trainOpts = Object.fromEntries(
    Object.entries(source.trainOpts ?? {}).filter(([, v]) => v !== null && v !== undefined),
  );
  const net = new brain.NeuralNetwork();
  net.fromJSON({ ...source, sizes: [...source.sizes], trainOpts });
  return net;
}

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

type RowsIn = Record<string, string>[] | (string | null)[][];

function readersOf(header: string[], rows: RowsIn): CellReader[] {
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
    return predictRows(model.engine as EngineState, model.params, header, readers.map((read) => ({ read })));
  }
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
    return { values: out };
  });
}
