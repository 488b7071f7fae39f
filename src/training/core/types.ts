/**
 * Public types of the training engine. Other modules (HTTP, jobs, DB) code against these; keep them
 * stable. Definitions of every derived figure live on the fields below and in engine.ts.
 */

/**
 * `key`: the column names the series a row belongs to (store, station, state); several key columns
 * together name one series (store x product). Keys are detected when no column is stated as one.
 */
export type ColumnRole = 'input' | 'output' | 'date' | 'ignore' | 'key';
export type ColumnKind = 'numeric' | 'categorical';
export type DatePart = 'year' | 'month' | 'day' | 'hour' | 'minute';

/**
 * A `date` column WITH `datePart` holds that part as a number ("2021", "3").
 * A `date` column WITHOUT `datePart` holds a whole date/time string (e.g. "2021-03-01", "01/03/2021 14:00");
 * its format is detected from the known rows (see dates.ts, DATE_FORMATS).
 * `kind` is ignored for date columns. Header columns without a spec are treated as `ignore`.
 */
export interface ColumnSpec {
  name: string;
  role: ColumnRole;
  kind: ColumnKind;
  datePart?: DatePart;
  /**
   * The user set this role (PUT /data `<column>=input`...), rather than the upload's defaults. A numeric
   * input empty in every row to forecast becomes an output of its own unless its role was stated;
   * a stated one is used through its past only (its value a horizon earlier; features.ts, lagged inputs).
   */
  stated?: boolean;
}

export interface TrainingParams {
  /**
   * Number of hidden layers (App record LayersRequested). Undefined/0/negative = auto:
   * 1 layer below 1000 known rows, else 2. Clamped to 1..MAX_HIDDEN_LAYERS (5); `figures.layersCreated`
   * reports what was built. Every hidden layer has the same width: the next power of two >= inputs+outputs,
   * clamped to 8..64 (e.g. 10 inputs + 1 output -> 16).
   */
  layersRequested?: number;
  /** brain.js SGD learning rate, 0 < lr < 1. Default 0.05 (momentum fixed at brain's 0.1). */
  learningRate?: number;
  /** Use only the most recent N known rows (after invalid rows are skipped). 0/undefined = all. A panel: per series. */
  dataRowsToConsider?: number;
  /**
   * Set by the training-set reader, never by users: the row cap (TRAINING_MAX_ROWS, or what fits the
   * memory budget) that an upload which may hold many series leaves to the engine, so that it cuts each series
   * to its most recent rows instead of the reader dropping whole series in upload order.
   */
  maxKnownRows?: number;
  /** Clip numeric forecasts at 0 (applied after the margins). */
  noNegatives?: boolean;
  /**
   * Percent. Numeric forecasts are moved up by |pred| * increaseMargin / 100. With decreaseMargin:
   * forecast = pred + |pred| * (increaseMargin - decreaseMargin) / 100, then noNegatives, then rounding.
   * Using |pred| means "increase" always moves the value upward, also for negative predictions.
   * Affects forecasts only (result.forecasts and predict()), never the hold-out metrics.
   */
  increaseMargin?: number;
  /** Percent. Numeric forecasts are moved down by |pred| * decreaseMargin / 100 (see increaseMargin). */
  decreaseMargin?: number;
  /**
   * Percent tolerance (default 10) for `successRate`: a hold-out prediction is a success when
   * |pred - actual| <= deviationTarget/100 * |actual| (if actual == 0: deviationTarget/100 * the training
   * range max-min of that output). Categorical outputs: success = exact class match.
   */
  deviationTarget?: number;
  /**
   * Percent. Optional early-stop goal: every CHECK_EVERY epochs the engine measures on the rows being
   * trained on the % of predictions deviating by more than deviationTarget% (same rule as successRate);
   * once that is <= deviatedTarget, training stops before `epochs`. Undefined = disabled (run all epochs).
   */
  deviatedTarget?: number;
  /** Max training epochs (brain `iterations`) per fit. Default clamp(round(600000 / knownRows), 20, 2000). */
  epochs?: number;
  /**
   * PRNG seed (mulberry32) for weight init and shuffling: equal input + seed => identical model and forecasts.
   * Undefined: a random seed is drawn and recorded in `model.params.seed` so a run can be reproduced.
   */
  seed?: number;
  /**
   * Which model families compete (App record `ModelFamily`, an addition): 'auto' (default) = every family
   * that applies, chosen by rolling-origin backtest (engine.ts); 'network' = the legacy single brain.js
   * network, as before the forecasting engine (no selection, no intervals).
   */
  modelFamily?: 'auto' | 'network';
}

/** Rows are in upload order (chronological). Empty string or null in ALL output cells = row to forecast. */
export interface TrainingInput {
  header: string[];
  columns: ColumnSpec[];
  rows: (string | null)[][];
  params: TrainingParams;
}

/**
 * `epoch`/`epochs` count both fits (hold-out fit + final fit) cumulatively so `advance` only rises;
 * `error` is brain's training MSE in the network's scaled units (targets in [-0.8, 0.8]);
 * `advance` 0..100 (100 = forecasts ready). Reports are throttled to one per 200 ms plus the first and last.
 */
export interface TrainingProgress {
  epoch: number;
  epochs: number;
  error: number;
  advance: number;
}

export type TrainedModel = TrainedModelV1 | TrainedModelV2;

/** The legacy network-only model (ModelFamily 'network', and every model stored before the engine). */
export interface TrainedModelV1 {
  version: 1;
  /** brain.js NeuralNetwork#toJSON() */
  network: unknown;
  /** EncoderState (encoder.ts): everything needed to encode inputs / decode outputs. JSON-safe. */
  encoder: unknown;
  /** Effective params (defaults resolved, seed recorded). predict() uses the margins/noNegatives from here. */
  params: TrainingParams;
}

/**
 * A model chosen by the forecasting engine: per output column the selected family (or inverse-error
 * weighted combination) refitted on every known row, plus what is needed to turn CSV rows into features.
 * Opaque outside src/training: predict() is the only reader.
 */
export interface TrainedModelV2 {
  version: 2;
  params: TrainingParams;
  engine: unknown;
}

/** Prediction interval bounds of one numeric output cell, formatted like the forecast itself. */
export interface ForecastInterval {
  lo80: string;
  hi80: string;
  lo95: string;
  hi95: string;
}

/** One candidate's backtest score for one output. error null = the family failed or did not apply (see note). */
export interface CandidateScore {
  name: string;
  description: string;
  error: number | null;
  note?: string;
}

/** How one output column's model was chosen. Errors are in the output's units (MAE) or 0..1 (error rate). */
export interface OutputSelection {
  column: string;
  kind: 'numeric' | 'categorical';
  /** MASE for a panel's summary over series of different scales. */
  metric: 'MAE' | 'error rate' | 'MASE';
  /** Winning candidate name, or 'combination'. */
  chosen: string;
  /** e.g. "combination of linear (0.62) and sarima (0.38)". */
  description: string;
  /** Backtest error of the chosen model. */
  error: number;
  /** The best naive-family candidate (the bar every forecast must clear). */
  baseline: { name: string; error: number };
  candidates: CandidateScore[];
  /**
   * Numeric outputs: the share of backtest rows inside the 80% and 95% intervals, each window checked
   * against widths built without it, and how many rows that is.
   */
  intervalCoverage?: { p80: number; p95: number; rows: number };
  /** How the answer departs from the backtest's choice and why (a final fit whose path cannot be right), one sentence each. */
  notes?: string[];
}

/** The engine's explanation of a run, shown in the status record and GET /jobs_progress progress=2. */
export interface SelectionReport {
  modelFamily: 'auto' | 'network';
  /** rolling-origin for time-ordered data, k-fold for tabular data, holdout for the legacy network. */
  scheme: 'rolling-origin' | 'k-fold' | 'holdout';
  windows: number;
  horizon: number;
  frequency: string;
  season: number;
  /** Every seasonal period the families were given, ascending; absent in reports from before a series could have several. */
  periods?: number[];
  /** Repeated timestamps dropped and gaps found on the time axis, one sentence each. */
  timeNotes?: string[];
  outputs: OutputSelection[];
  /** An upload of many series: how the series were found and how each was forecast. */
  panel?: PanelReport;
}

/** One series of a panel: its key values (in `PanelReport.keys` order) and its outputs' selections, in brief. */
export interface PanelSeriesReport {
  key: string[];
  /** Known rows of the series the models saw. */
  rows: number;
  outputs: { column: string; chosen: string; error: number; baseline: { name: string; error: number } }[];
  /** Why a series got no model of its own (no known value, too short): its forecast's source. */
  note?: string;
}

/**
 * The panel part of a selection report. `outputs` of the report then hold, per output column, the
 * candidates' mean scaled errors over the series (MASE against each series' in-sample naive), so one table
 * still reads across series of different scales.
 */
export interface PanelReport {
  /** Key columns, in upload order. */
  keys: string[];
  /** 'detected' from the upload, or 'stated' by the user (column role `key`). */
  keySource: 'detected' | 'stated';
  series: number;
  /** Known rows of the shortest and the longest series. */
  shortest: number;
  longest: number;
  /** How often each family (or 'combination') won, over every series x output. */
  wins: Record<string, number>;
  /** The first 1,000 series in upload order (`series` counts them all). */
  perSeries: PanelSeriesReport[];
}

export interface TrainingResult {
  model: TrainedModel;
  /**
   * Full rows keyed by CSV column names: inputs, dates and ignored columns copied, outputs predicted.
   * rowIndex = index into input.rows; null for generated future rows.
   */
  forecasts: { rowIndex: number | null; values: Record<string, string>; intervals?: Record<string, ForecastInterval> }[];
  /** Which model won and why; undefined only for results of the legacy engine, from before the model families. */
  selection?: SelectionReport;
  /**
   * Hold-out metrics (last 20% of known rows, model trained on the first 80%), raw predictions (no margins,
   * no clipping, no rounding), original units of the outputs. Several numeric outputs: the mean of the
   * per-output figures. Only categorical outputs: mae = error rate (0..1), rmse = sqrt(error rate), mape null.
   * mape is in percent over non-zero actuals (null if none). baseline* = seasonal-naive (see engine.ts).
   */
  metrics: {
    mae: number;
    rmse: number;
    mape: number | null;
    baselineMae: number;
    baselineRmse: number;
    validationRows: number;
    trainingRows: number;
  };
  /** 0..100 integer: % of hold-out predictions (row x output) within deviationTarget% of the actual. */
  successRate: number;
  /**
   * inputs/outputs = encoded feature counts (network input/output layer sizes); neurons = total hidden
   * neurons of the final network; layersRequested = params.layersRequested, or the automatic choice when
   * not given; layersCreated = hidden layers actually built (after clamping to 1..5).
   */
  figures: { neurons: number; inputs: number; outputs: number; layersRequested: number; layersCreated: number };
  /**
   * The final fit only (all known rows): trainMs = wall time inside brain's train(), samples = rows,
   * epochs = epochs run, samplesEpochsPerSecond = samples * epochs / (trainMs / 1000).
   */
  timing: {
    trainMs: number;
    samples: number;
    epochs: number;
    samplesEpochsPerSecond: number;
    /** Where a panel's time went: reading and splitting the series, backtests, final fits and forecasts. */
    phases?: { readMs: number; backtestMs: number; fitMs: number };
  };
}

/**
 * too_large: the job would exceed its memory budget (training-set.ts); out_of_memory: its thread hit the
 * heap limit (pool.ts). Both fail the job with the reason and leave the process serving.
 */
export type TrainingErrorCode = 'invalid_input' | 'aborted' | 'too_large' | 'out_of_memory';

/** Errors the caller can act on; anything else thrown by the engine is a bug. */
export class TrainingError extends Error {
  override readonly name = 'TrainingError';
  constructor(
    readonly code: TrainingErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isTrainingError(error: unknown): error is TrainingError {
  return error instanceof TrainingError;
}
