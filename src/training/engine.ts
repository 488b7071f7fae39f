/**
 * The training engine: synchronous and CPU-bound, meant to run inside a worker thread (pool.ts), but free
 * of any thread/HTTP/DB concern so it can be tested and benchmarked in-process.
 *
 * Procedure (trainModel):
 *  1. Rows whose output cells are ALL empty are rows to forecast. The others are known rows; a known row is
 *     skipped (invalid) when an output cell is empty or a numeric output/input, date part or date cell does
 *     not parse (values.parseNumber): it is treated as missing, never imputed for training.
 *  2. `dataRowsToConsider` keeps the most recent N valid known rows. At least MIN_KNOWN_ROWS are needed.
 *  3. Chronological hold-out: the last 20% of those rows (at least 1) are the validation rows. A network
 *     trained on the first 80% (encoder fitted on them only) is scored on them -> metrics, successRate.
 *  4. The final model is RETRAINED from scratch on all known rows (same params, fresh encoder fit), so the
 *     hold-out figures estimate exactly the procedure that produced the stored model.
 *  5. Forecasts = predict(final model) on the rows to forecast; if there are none, on generated future rows:
 *     `horizon` rows (monthly 12, daily 7, hourly 24, otherwise 1) stepped from the last known date with the
 *     detected step, other inputs copied from the last known row.
 *
 * Baseline: seasonal naive, the actual value of the same output `season` known rows earlier (monthly 12,
 * daily 7, hourly 24, else 1 = last value); when that row is before the first considered row, the previous
 * row. Frequency: modal gap between consecutive known dates (dates.detectFrequency).
 *
 * Network: brain.js NeuralNetwork, tanh (encoder.ts ACTIVATION), per-sample SGD (momentum 0.1). Training rows are shuffled once
 * (seeded) because brain never shuffles and chronological order would bias the last epochs to the end.
 */
import brain from 'brain.js';
import type { DateTime } from 'luxon';
import {
  PART_ORDER,
  NO_TIME_AXIS,
  detectDateFormat,
  detectFrequency,
  finestVaryingPart,
  isMonthEndSeries,
  parseDate,
  stepDate,
  timelineFromParts,
  withDateCache,
  type PartValues,
} from './dates.js';
import {
  ACTIVATION,
  encodeOutputs,
  fitEncoder,
  readOutputs,
  readPart,
  type CellReader,
  type EncoderState,
  type OutputValue,
  type TimeAxisState,
} from './encoder.js';
import { mulberry32, shuffleInPlace, withSeededRandom } from './prng.js';
import { encodeRow, loadNetwork, predict, runEncoded, runRow, type NetworkLike } from './predict.js';
import {
  TrainingError,
  type ColumnSpec,
  type TrainedModel,
  type TrainingInput,
  type TrainingParams,
  type TrainingProgress,
  type TrainingResult,
} from './types.js';
import { isEmptyCell, parseNumber } from './values.js';

export const MIN_KNOWN_ROWS = 5;
export const HOLDOUT_SHARE = 0.2;
export const MAX_HIDDEN_LAYERS = 5;
export const MIN_LAYER_WIDTH = 8;
export const MAX_LAYER_WIDTH = 64;
export const DEFAULT_LEARNING_RATE = 0.05;
export const DEFAULT_DEVIATION_TARGET = 10;
export const MAX_EPOCHS = 100_000;
/** Epoch budget default: about SAMPLE_EPOCH_BUDGET row presentations per fit, within [20, 2000] epochs. */
export const SAMPLE_EPOCH_BUDGET = 600_000;
/** Epochs between deviatedTarget early-stop checks (each costs a forward pass over the fit rows). */
export const CHECK_EVERY = 10;
/** brain stops when training MSE (scaled units) <= errorThresh; tiny, so `epochs` is the real budget. */
const ERROR_THRESH = 1e-9;
const MOMENTUM = 0.1;

export interface EngineHooks {
  onProgress?: (progress: TrainingProgress) => void;
  /** Minimum ms between progress reports (the first (0) and the final (100) are always sent). Default 200. */
  progressIntervalMs?: number;
}

interface Analysis {
  columns: ColumnSpec[];
  readers: CellReader[];
  /** Valid known row indices, chronological, after dataRowsToConsider. */
  known: number[];
  /** Rows to forecast (all output cells empty). */
  forecast: number[];
  timeAxis: TimeAxisState;
  dateFormats: Record<string, string>;
  timeline: (DateTime | null)[];
}

interface Sample {
  input: number[];
  output: number[];
  actual: OutputValue[];
}

interface ResolvedParams extends TrainingParams {
  learningRate: number;
  epochs: number;
  seed: number;
  deviationTarget: number;
}

/** Trains and forecasts; throws TrainingError('invalid_input') for uploads that cannot be trained on. */
export function trainModel(input: TrainingInput, hooks: EngineHooks = {}): TrainingResult {
  return withDateCache(() => {
    const analysis = analyse(input);
    const params = resolveParams(input.params, analysis.known.length);
    return withSeededRandom(params.seed, () => run(input, analysis, params, hooks));
  });
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
  const values = predict(model, input.header, forecastRows.map((r) => r.cells));
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

function invalid(message: string): TrainingError {
  return new TrainingError('invalid_input', message);
}

function resolveParams(p: TrainingParams, knownRows: number): ResolvedParams {
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

/** Width of every hidden layer: next power of two >= inputs + outputs, within [8, 64]. */
export function hiddenLayerWidth(inputs: number, outputs: number): number {
  return Math.max(MIN_LAYER_WIDTH, Math.min(MAX_LAYER_WIDTH, 2 ** Math.ceil(Math.log2(inputs + outputs))));
}

// ---------------------------------------------------------------------------------------------------------
// Analysis of the upload

function analyse(input: TrainingInput): Analysis {
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
  const dateColumns = columns.filter((c) => c.role === 'date' && !c.datePart);
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

  const dateFormats: Record<string, string> = {};
  for (const col of dateColumns) {
    const format = detectDateFormat(candidates.map((i) => (readers[i] as CellReader)(col.name) ?? ''));
    if (format === null) throw invalid(`Column '${col.name}': unrecognised date format`);
    dateFormats[col.name] = format;
  }

  const valid = candidates.filter((i) => isValidKnownRow(readers[i] as CellReader, columns, dateFormats));
  const limit = input.params.dataRowsToConsider;
  const known = limit !== undefined && limit > 0 && valid.length > limit ? valid.slice(valid.length - Math.floor(limit)) : valid;
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
  if (timeAxis.source !== 'none') {
    const knownDates = known.map((i) => timeline[i]).filter((d): d is DateTime => d != null);
    const monthEnd = timeAxis.realDates && isMonthEndSeries(knownDates);
    const unit = monthEnd ? 'month' : finestVaryingPart(knownDates);
    timeAxis = { ...timeAxis, ...detectFrequency(known.map((i) => timeline[i] ?? null), unit), monthEnd };
  }
  return { columns, readers, known, forecast, timeAxis, dateFormats, timeline };
}

function isValidKnownRow(read: CellReader, columns: ColumnSpec[], dateFormats: Record<string, string>): boolean {
  for (const c of columns) {
    const cell = read(c.name);
    if (c.role === 'output') {
      if (isEmptyCell(cell)) return false;
      if (c.kind === 'numeric' && parseNumber(cell) === null) return false;
    } else if (c.role === 'input') {
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
function futureRows(input: TrainingInput, analysis: Analysis): (string | null)[][] {
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
    const offset = k * axis.step;
    const date = lastDate ? stepDate(lastDate, axis.unit, offset, axis.monthEnd) : null;
    result.push(
      input.header.map((name, i) => {
        const spec = specs.get(name);
        if (!spec || spec.role === 'output') return '';
        if (spec.role === 'date' && spec.datePart) return date ? String(date[spec.datePart]) : (last[i] ?? '');
        if (spec.role === 'date') {
          const base = lastDates.get(name) ?? null;
          const format = analysis.dateFormats[name] as string;
          return base && axis.source !== 'none' ? stepDate(base, axis.unit, offset, axis.monthEnd).toFormat(format) : (last[i] ?? '');
        }
        return last[i] ?? '';
      }),
    );
  }
  return result;
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

// ---------------------------------------------------------------------------------------------------------
// Progress

class ProgressReporter {
  private last = -Infinity;
  private readonly interval: number;

  constructor(
    private readonly total: number,
    private readonly hooks: EngineHooks,
  ) {
    this.interval = hooks.progressIntervalMs ?? 200;
    this.emit(0, 1, 0);
  }

  epoch(epoch: number, error: number): void {
    const now = performance.now();
    if (now - this.last < this.interval) return;
    this.emit(epoch, error, Math.min(99, Math.floor((100 * epoch) / this.total)));
  }

  done(error: number): void {
    this.emit(this.total, error, 100);
  }

  private emit(epoch: number, error: number, advance: number): void {
    if (!this.hooks.onProgress) return;
    this.last = performance.now();
    this.hooks.onProgress({ epoch, epochs: this.total, error, advance });
  }
}
