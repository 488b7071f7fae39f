/**
 * The legacy network-only procedure (App record ModelFamily 'network', and how every model was trained before
 * the forecasting engine): one brain.js network on min-max scaled features.
 *  1. Chronological hold-out: the last 20% of the known rows (at least 1) are the validation rows. A network
 *     trained on the first 80% (encoder fitted on them only) is scored on them -> metrics, successRate.
 *  2. The final model is RETRAINED from scratch on all known rows (same params, fresh encoder fit), so the
 *     hold-out figures estimate exactly the procedure that produced the stored model.
 *  3. Forecasts = predict(final model) on the rows to forecast, or on generated future rows (series.ts).
 *
 * Baseline: seasonal naive, the actual value of the same output `season` known rows earlier (monthly 12,
 * daily 7, hourly 24, else 1 = last value); when that row is before the first considered row, the previous
 * row. Network: brain.js NeuralNetwork, tanh (encoder.ts ACTIVATION), per-sample SGD (momentum 0.1).
 * Training rows are shuffled once (seeded) because brain never shuffles and chronological order would bias
 * the last epochs to the end.
 */
import brain from 'brain.js';
import {
  ERROR_THRESH,
  hiddenLayerWidth,
  loadNetwork,
  MAX_HIDDEN_LAYERS,
  MOMENTUM,
  SAMPLE_EPOCH_BUDGET,
  type NetworkLike,
} from './brain-network.js';
import {
  ACTIVATION,
  encodeOutputs,
  fitEncoder,
  readOutputs,
  type CellReader,
  type EncoderState,
  type OutputValue,
} from '../core/encoder.js';
import { mulberry32, shuffleInPlace, withSeededRandom } from '../core/prng.js';
import { encodeRow, predictLegacy, readersOf, runEncoded, runRow } from './legacy-predict.js';
import { ProgressReporter, type EngineHooks } from '../core/progress.js';
import { futureRows, invalid, type Analysis } from '../core/series.js';
import type { TrainedModel, TrainingInput, TrainingParams, TrainingResult } from '../core/types.js';

export const HOLDOUT_SHARE = 0.2;
export const DEFAULT_LEARNING_RATE = 0.05;
export const DEFAULT_DEVIATION_TARGET = 10;
export const MAX_EPOCHS = 100_000;
/** Epochs between deviatedTarget early-stop checks (each costs a forward pass over the fit rows). */
export const CHECK_EVERY = 10;



interface Sample {
  input: number[];
  output: number[];
  actual: OutputValue[];
}

export interface ResolvedParams extends TrainingParams {
  learningRate: number;
  epochs: number;
  seed: number;
  deviationTarget: number;
}

/** The legacy procedure on an analysed upload (see the module comment). */
export function trainNetworkOnly(input: TrainingInput, analysis: Analysis, hooks: EngineHooks, seed: number): TrainingResult {
  const params = resolveParams({ ...input.params, seed }, analysis.known.length);
  return withSeededRandom(params.seed, () => run(input, analysis, params, hooks));
}

function run(input: TrainingInput, analysis: Analysis, params: ResolvedParams, hooks: EngineHooks): TrainingResult {
  const { known, readers } = analysis;
  const n = known.length;
  const validationRows = Math.max(1, Math.round(n * HOLDOUT_SHARE));
  const trainRows = known.slice(0, n - validationRows);
  const holdout = known.slice(n - validationRows);
  const progress = new ProgressReporter(params.epochs * 2, hooks);
  const random = mulberry32(params.seed ^ 0x9e3779b9);
  // Layer count from the known-row count, so both fits build the same shape.
  const layers = hiddenLayerCount(params.layersRequested, n);

  // Phase 1: fit on the first 80%, score on the hold-out.
  const encA = fitEncoder(analysis.columns, trainRows.map((i) => readers[i] as CellReader), analysis.timeAxis, analysis.dateFormats);
  const fitA = fitNetwork(encA, samplesOf(encA, trainRows, readers), params, layers, random, (epoch, error) =>
    progress.epoch(epoch, error),
  );
  const predictions = holdout.map((i) => runRow(fitA.net, encA, readers[i] as CellReader));
  const actuals = holdout.map((i) => readOutputs(encA, readers[i] as CellReader));
  const season = analysis.timeAxis.season;
  const baseline = holdout.map((_, h) => {
    const position = n - validationRows + h;
    const lagged = position - season >= 0 ? position - season : position - 1;
    return readOutputs(encA, readers[known[lagged] as number] as CellReader);
  });
  const metrics = scoreHoldout(encA, predictions, actuals, baseline);
  const successRate = Math.round(
    100 * (1 - deviationShare(encA, predictions, actuals, params.deviationTarget)),
  );

  // Phase 2: retrain from scratch on every known row for the stored model.
  const encB = fitEncoder(analysis.columns, known.map((i) => readers[i] as CellReader), analysis.timeAxis, analysis.dateFormats);
  const fitB = fitNetwork(encB, samplesOf(encB, known, readers), params, layers, random, (epoch, error) =>
    progress.epoch(params.epochs + epoch, error),
  );
  const model: TrainedModel = { version: 1, network: fitB.json, encoder: encB, params };

  const forecastRows =
    analysis.forecast.length > 0
      ? analysis.forecast.map((i) => ({ rowIndex: i, cells: input.rows[i] as (string | null)[] }))
      : futureRows(input, analysis).map((cells) => ({ rowIndex: null as number | null, cells }));
  const values = predictLegacy(model, input.header, readersOf(input.header, forecastRows.map((r) => r.cells)));
  const forecasts = forecastRows.map((r, i) => ({ rowIndex: r.rowIndex, values: values[i] as Record<string, string> }));
  progress.done(fitB.error);

  const requested = input.params.layersRequested;
  return {
    model,
    forecasts,
    metrics: { ...metrics, validationRows, trainingRows: trainRows.length },
    successRate: Math.max(0, Math.min(100, successRate)),
    figures: {
      neurons: fitB.hidden.reduce((a, b) => a + b, 0),
      inputs: encB.inputSize,
      outputs: encB.outputSize,
      layersRequested: requested !== undefined && requested > 0 ? requested : fitB.hidden.length,
      layersCreated: fitB.hidden.length,
    },
    timing: {
      trainMs: fitB.trainMs,
      samples: n,
      epochs: fitB.epochs,
      samplesEpochsPerSecond: fitB.trainMs > 0 ? (n * fitB.epochs) / (fitB.trainMs / 1000) : 0,
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Parameters and network shape

export function resolveParams(p: TrainingParams, knownRows: number): ResolvedParams {
  const finite = (name: string, v: number | undefined) => {
    if (v !== undefined && !Number.isFinite(v)) throw invalid(`Parameter ${name} must be a finite number`);
  };
  for (const key of ['layersRequested', 'learningRate', 'dataRowsToConsider', 'increaseMargin', 'decreaseMargin', 'deviationTarget', 'deviatedTarget', 'epochs', 'seed'] as const) {
    finite(key, p[key]);
  }
  const learningRate = p.learningRate ?? DEFAULT_LEARNING_RATE;
  if (!(learningRate > 0 && learningRate < 1)) throw invalid('learningRate must be > 0 and < 1');
  const epochs =
    p.epochs !== undefined && p.epochs > 0
      ? Math.min(MAX_EPOCHS, Math.ceil(p.epochs))
      : Math.max(20, Math.min(2000, Math.round(SAMPLE_EPOCH_BUDGET / Math.max(1, knownRows))));
  const deviationTarget = p.deviationTarget !== undefined && p.deviationTarget > 0 ? p.deviationTarget : DEFAULT_DEVIATION_TARGET;
  const seed = p.seed !== undefined ? Math.trunc(p.seed) >>> 0 : Math.floor(Math.random() * 2 ** 32);
  return { ...p, learningRate, epochs, deviationTarget, seed };
}

/** Hidden layer count: see TrainingParams.layersRequested. */
export function hiddenLayerCount(layersRequested: number | undefined, knownRows: number): number {
  if (layersRequested !== undefined && layersRequested > 0) {
    return Math.min(MAX_HIDDEN_LAYERS, Math.max(1, Math.round(layersRequested)));
  }
  return knownRows < 1000 ? 1 : 2;
}

// ---------------------------------------------------------------------------------------------------------
// Fitting

function samplesOf(encoder: EncoderState, indices: number[], readers: CellReader[]): Sample[] {
  return indices.map((i) => {
    const read = readers[i] as CellReader;
    const actual = readOutputs(encoder, read);
    return { input: encodeRow(encoder, read), output: Array.from(encodeOutputs(encoder, actual)), actual };
  });
}

/** Thrown from brain's callback: the only way to end its synchronous train() loop early. */
class StopTraining extends Error {
  constructor(
    readonly epochs: number,
    readonly error: number,
  ) {
    super('deviatedTarget reached');
  }
}

interface Fit {
  net: NetworkLike;
  json: unknown;
  hidden: number[];
  epochs: number;
  error: number;
  trainMs: number;
}

function fitNetwork(
  encoder: EncoderState,
  samples: Sample[],
  params: ResolvedParams,
  layers: number,
  random: () => number,
  onEpoch: (epoch: number, error: number) => void,
): Fit {
  const width = hiddenLayerWidth(encoder.inputSize, encoder.outputSize);
  const hidden = Array.from({ length: layers }, () => width);
  const net = new brain.NeuralNetwork({ hiddenLayers: hidden, activation: ACTIVATION });
  const data = shuffleInPlace(
    samples.map((s) => ({ input: s.input, output: s.output })),
    random,
  );
  const goal = params.deviatedTarget;
  const callback = (state: { iterations: number; error: number }) => {
    onEpoch(state.iterations, state.error);
    if (goal !== undefined && goal >= 0 && state.iterations % CHECK_EVERY === 0 && state.iterations < params.epochs) {
      const predictions = samples.map((s) => runEncoded(net as unknown as NetworkLike, encoder, s.input));
      const share = deviationShare(encoder, predictions, samples.map((s) => s.actual), params.deviationTarget);
      if (share * 100 <= goal) throw new StopTraining(state.iterations, state.error);
    }
  };
  const started = performance.now();
  let epochs: number;
  let error: number;
  try {
    const status = net.train(data, {
      iterations: params.epochs,
      errorThresh: ERROR_THRESH,
      learningRate: params.learningRate,
      momentum: MOMENTUM,
      callback,
      callbackPeriod: 1,
      log: false,
    });
    epochs = status.iterations;
    error = status.error;
  } catch (stop) {
    if (!(stop instanceof StopTraining)) throw stop;
    epochs = stop.epochs;
    error = stop.error;
  }
  const trainMs = performance.now() - started;
  const json = net.toJSON();
  // Predictions always go through the serialized network so they equal predict() on the stored model.
  return { net: loadNetwork(json), json, hidden, epochs, error, trainMs };
}

// ---------------------------------------------------------------------------------------------------------
// Scoring

/** Share (0..1) of prediction cells outside the deviationTarget tolerance; see TrainingParams.deviationTarget. */
function deviationShare(encoder: EncoderState, predictions: OutputValue[][], actuals: OutputValue[][], target: number): number {
  let cells = 0;
  let deviated = 0;
  predictions.forEach((pred, r) => {
    encoder.outputs.forEach((t, j) => {
      const p = pred[j] as OutputValue;
      const a = (actuals[r] as OutputValue[])[j] as OutputValue;
      cells++;
      if (t.type === 'numeric') {
        const reference = (a as number) !== 0 ? Math.abs(a as number) : t.max - t.min;
        if (Math.abs((p as number) - (a as number)) > (target / 100) * reference) deviated++;
      } else if (p !== a) {
        deviated++;
      }
    });
  });
  return cells === 0 ? 0 : deviated / cells;
}

function scoreHoldout(
  encoder: EncoderState,
  predictions: OutputValue[][],
  actuals: OutputValue[][],
  baseline: OutputValue[][],
): Omit<TrainingResult['metrics'], 'validationRows' | 'trainingRows'> {
  const numeric = encoder.outputs.map((t, j) => [t, j] as const).filter(([t]) => t.type === 'numeric');
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  if (numeric.length === 0) {
    const rate = (preds: OutputValue[][]) =>
      mean(encoder.outputs.map((_, j) => mean(preds.map((p, r) => (p[j] === (actuals[r] as OutputValue[])[j] ? 0 : 1)))));
    const mae = rate(predictions);
    const baselineMae = rate(baseline);
    return { mae, rmse: Math.sqrt(mae), mape: null, baselineMae, baselineRmse: Math.sqrt(baselineMae) };
  }
  const errors = (preds: OutputValue[][], j: number) =>
    preds.map((p, r) => (p[j] as number) - ((actuals[r] as OutputValue[])[j] as number));
  const maes: number[] = [];
  const rmses: number[] = [];
  const mapes: number[] = [];
  const baseMaes: number[] = [];
  const baseRmses: number[] = [];
  for (const [, j] of numeric) {
    const e = errors(predictions, j);
    const b = errors(baseline, j);
    maes.push(mean(e.map(Math.abs)));
    rmses.push(Math.sqrt(mean(e.map((x) => x * x))));
    baseMaes.push(mean(b.map(Math.abs)));
    baseRmses.push(Math.sqrt(mean(b.map((x) => x * x))));
    const pct = e
      .map((x, r) => [x, (actuals[r] as OutputValue[])[j] as number] as const)
      .filter(([, a]) => a !== 0)
      .map(([x, a]) => Math.abs(x / a) * 100);
    if (pct.length > 0) mapes.push(mean(pct));
  }
  return {
    mae: mean(maes),
    rmse: mean(rmses),
    mape: mapes.length > 0 ? mean(mapes) : null,
    baselineMae: mean(baseMaes),
    baselineRmse: mean(baseRmses),
  };
}

