/**
 * The forecasting engine (issue 10): synchronous and CPU-bound, meant to run inside a worker thread
 * (pool.ts), free of any thread/HTTP/DB concern so it can be tested and benchmarked in-process.
 *
 * trainModel():
 *  1. Reads the upload (series.ts): known rows, rows to forecast, time axis and frequency.
 *  2. ModelFamily 'network' takes the legacy path (legacy.ts): one brain.js network, as before the engine.
 *  3. Otherwise, per output column: builds the features (features.ts) and the time index, backtests every
 *     applicable family of the registry (models/candidates.ts) on the known rows only (backtest.ts: rolling
 *     origin for time-ordered data, k-fold for tabular data), selects the best single model or combination
 *     (selection.ts), refits the winners on every known row, and derives 80/95% intervals from the winner's
 *     backtest errors (intervals.ts).
 *  4. Forecasts come from predict() on the JSON round-tripped stored model (forecaster.ts), so a reload
 *     predicts identically.
 *
 * The seed is derived from the upload and the parameters unless one is given: the same upload gives the same
 * forecast. Hold-out figures (metrics, successRate) are those of the winner on the backtest rows; the
 * baseline figures are those of the best naive family on the same rows.
 */
import { createHash } from 'node:crypto';
import type { DateTime } from 'luxon';
import { stepFrom, withDateCache } from './dates.js';
import type { CellReader } from './encoder.js';
import { featureNames, featuresOf, fitFeatureSpace } from './features.js';
import { kFold, rollingOrigin, type Backtest } from './backtest.js';
import { predictRows, type EngineState, type OutputState, type RowToPredict, type SeriesState } from './forecaster.js';
import { errorsByStep, heldOutCoverage, intervalWidths, type WindowErrors } from './intervals.js';
import { hiddenLayerWidth } from './brain-network.js';
import { DEFAULT_DEVIATION_TARGET, DEFAULT_LEARNING_RATE, hiddenLayerCount, trainNetworkOnly } from './legacy.js';
import { familiesFor } from './models/candidates.js';
import type { FamilyParams, FitRows, ModelFamily, SeriesInfo } from './models/model.js';
import { ProgressReporter, type EngineHooks } from './progress.js';
import { bestNaive, chooseWinner, scoreFamilies, type Scored, type Winner } from './selection.js';
import { analyse, futureRows, invalid, timeIndex, type Analysis } from './series.js';
import type { OutputSelection, TrainedModelV2, TrainingInput, TrainingParams, TrainingResult } from './types.js';
import { countDecimals, parseNumber } from './values.js';

export { hiddenLayerWidth } from './brain-network.js';
export { DEFAULT_LEARNING_RATE, hiddenLayerCount } from './legacy.js';
export { MIN_KNOWN_ROWS } from './series.js';
export type { EngineHooks } from './progress.js';

/** Default epoch cap of a network fit (brain `iterations`), as the legacy engine's budget. */
export const DEFAULT_EPOCHS = 2000;

export function trainModel(input: TrainingInput, hooks: EngineHooks = {}): TrainingResult {
  return withDateCache(() => {
    const analysis = analyse(input);
    const seed = input.params.seed !== undefined && Number.isFinite(input.params.seed) ? Math.trunc(input.params.seed) >>> 0 : seedOf(input);
    if (input.params.modelFamily === 'network') return trainNetworkOnly(input, analysis, hooks, seed);
    return forecast(input, analysis, hooks, seed);
  });
}

/** 32 bits of a hash of everything that defines the run. */
function seedOf(input: TrainingInput): number {
  const hash = createHash('sha256');
  hash.update(JSON.stringify([input.header, input.columns, input.params]));
  for (const row of input.rows) hash.update(JSON.stringify(row));
  return hash.digest().readUInt32LE(0);
}

/**
 * The seed of one fit: of the run's seed and what the fit is (output, family, rows, final refit), never of
 * which other families ran before it, so adding or removing a family changes no other family's forecast.
 */
function fitSeed(seed: number, column: string, family: string, fitRows: number, final: boolean): number {
  return createHash('sha256').update(JSON.stringify([seed, column, family, fitRows, final])).digest().readUInt32LE(0);
}

interface Placement {
  series: SeriesState;
  info: SeriesInfo;
  /** Time of each known row (aligned with analysis.known). */
  knownTimes: number[];
  /** Rows to forecast: cells, date and time. */
  targets: { rowIndex: number | null; cells: (string | null)[]; date: DateTime | null; time: number }[];
}

function place(input: TrainingInput, analysis: Analysis): Placement {
  const axis = analysis.timeAxis;
  const firstDate = analysis.timeline[analysis.known[0] as number] ?? null;
  const times = firstDate ? timeIndex(analysis, firstDate) : analysis.timeline.map(() => null);
  const known = analysis.known.map((i) => times[i] ?? null);
  const increasing = known.every((t, k) => t !== null && (k === 0 || t > (known[k - 1] as number)));
  const timeOrdered = axis.source !== 'none' && increasing && analysis.forecast.every((i) => times[i] !== null);
  const knownTimes = timeOrdered ? (known as number[]) : known.map((_, k) => k);
  const lastTime = knownTimes[knownTimes.length - 1] as number;
  const lastDate = analysis.timeline[analysis.known.at(-1) as number] ?? null;

  let targets: Placement['targets'];
  if (analysis.forecast.length > 0) {
    targets = analysis.forecast.map((i, j) => ({
      rowIndex: i,
      cells: input.rows[i] as (string | null)[],
      date: analysis.timeline[i] ?? null,
      time: timeOrdered ? (times[i] as number) : lastTime + 1 + j,
    }));
  } else {
    targets = futureRows(input, analysis).map((cells, j) => ({
      rowIndex: null,
      cells,
      date: lastDate && axis.source !== 'none' ? stepFrom(lastDate, axis, j + 1) : null,
      time: lastTime + 1 + j,
    }));
  }
  const ahead = targets.map((t) => t.time - lastTime);
  const horizon = timeOrdered
    ? Math.max(1, Math.min(Math.max(...ahead, 1), Math.floor(knownTimes.length / 2)))
    : Math.max(1, targets.length);
  // Only the periods the known rows hold two full cycles of can be learnt (issue 28); the shortest is the
  // season the one-season families (seasonal naive, SARIMA, ETS, Theta, season dummies) take.
  const span = knownTimes.length > 0 ? (knownTimes[knownTimes.length - 1] as number) - (knownTimes[0] as number) + 1 : 0;
  const periods = timeOrdered ? axis.periods.filter((p) => Math.round(p) > 1 && 2 * p <= span) : [];
  const season = periods.length > 0 ? Math.round(periods[0] as number) : 1;
  const info: SeriesInfo = { timeOrdered, frequency: axis.frequency, season, periods, horizon };
  const series: SeriesState = {
    timeOrdered,
    source: axis.source,
    dateColumn: axis.dateColumn,
    partColumns: axis.partColumns,
    coarsest: axis.coarsest,
    realDates: axis.realDates,
    unit: axis.unit,
    step: axis.step,
    monthEnd: axis.monthEnd,
    frequency: axis.frequency,
    businessDays: axis.businessDays,
    season,
    periods,
    horizon,
    origin: firstDate ? firstDate.toISO() : null,
    lastTime,
  };
  return { series, info, knownTimes, targets };
}

function familyParams(params: TrainingParams): FamilyParams {
  return {
    layersRequested: params.layersRequested !== undefined && params.layersRequested > 0 ? Math.round(params.layersRequested) : 0,
    learningRate: params.learningRate ?? DEFAULT_LEARNING_RATE,
    epochs: params.epochs !== undefined && params.epochs > 0 ? Math.ceil(params.epochs) : DEFAULT_EPOCHS,
    deviatedTarget: params.deviatedTarget,
    deviationTarget: params.deviationTarget !== undefined && params.deviationTarget > 0 ? params.deviationTarget : DEFAULT_DEVIATION_TARGET,
  };
}

function checkParams(p: TrainingParams): void {
  for (const key of ['layersRequested', 'learningRate', 'dataRowsToConsider', 'increaseMargin', 'decreaseMargin', 'deviationTarget', 'deviatedTarget', 'epochs'] as const) {
    const v = p[key];
    if (v !== undefined && !Number.isFinite(v)) throw invalid(`Parameter ${key} must be a finite number`);
  }
  const lr = p.learningRate;
  if (lr !== undefined && !(lr > 0 && lr < 1)) throw invalid('learningRate must be > 0 and < 1');
}

interface OutputRun {
  column: string;
  kind: 'numeric' | 'categorical';
  decimals: number;
  data: FitRows;
  scored: Scored[];
  winner: Winner;
  /** Held-out coverage of the 80/95% intervals on the backtest (numeric outputs). */
  coverage?: { p80: number; p95: number; rows: number } | null;
}

function forecast(input: TrainingInput, analysis: Analysis, hooks: EngineHooks, seed: number): TrainingResult {
  checkParams(input.params);
  const started = performance.now();
  const params = { ...input.params, seed };
  const familyParamsResolved = familyParams(params);
  const placement = place(input, analysis);
  const { info, knownTimes } = placement;
  const space = fitFeatureSpace(analysis, info.timeOrdered);
  const names = featureNames(space);
  const readers = analysis.known.map((i) => analysis.readers[i] as CellReader);
  const features = analysis.known.map((i, k) => featuresOf(space, readers[k] as CellReader, analysis.timeline[i] ?? null));
  const n = analysis.known.length;
  const minFit = Math.max(4, Math.min(2 * info.season + 2, Math.floor(n / 2)));
  const backtest: Backtest = info.timeOrdered ? rollingOrigin(knownTimes, info.horizon, minFit) : kFold(n, seed);
  if (backtest.splits.length === 0) throw invalid(`Too few known rows to test a model: ${n}`);

  const outputs = analysis.columns.filter((c) => c.role === 'output');
  const plan = outputs.map((col) => ({ col, families: familiesFor(col.kind) }));
  // Weighted by each family's own cost estimate, over the families that apply, so Advance moves evenly.
  const windows = backtest.splits.length;
  const total = plan.reduce(
    (sum, p) => sum + p.families.filter((f) => f.applies(info, n)).reduce((s, f) => s + f.cost(info, n, false) * windows + f.cost(info, n, true), 0),
    0,
  );
  const progress = new ProgressReporter(total, hooks);
  let done = 0;
  const context = (column: string, family: ModelFamily, fitRows: number, final = false) => {
    const cost = family.cost(info, fitRows, final);
    const base = done;
    done += cost;
    return {
      seed: fitSeed(seed, column, family.name, fitRows, final),
      params: familyParamsResolved,
      featureNames: names,
      final,
      progress: (share: number) => progress.epoch(base + Math.min(1, Math.max(0, share)) * cost, 0),
    };
  };

  const runs: OutputRun[] = plan.map(({ col, families }) => {
    const cells = readers.map((read) => read(col.name) ?? '');
    const target = col.kind === 'numeric' ? cells.map((c) => parseNumber(c) as number) : cells.map((c) => c.trim());
    const data: FitRows = { time: knownTimes, features, target: target };
    const scored = scoreFamilies(families, data, backtest, info, (family, fitRows) => context(col.name, family, fitRows));
    const winner = chooseWinner(scored, backtest, data, col.kind);
    const decimals = col.kind === 'numeric' ? cells.reduce((m, c) => Math.max(m, countDecimals(c)), 0) : 0;
    return { column: col.name, kind: col.kind, decimals, data, scored, winner };
  });

  // Refit the winners on every known row; their JSON-safe states are the stored model.
  const outputStates: OutputState[] = runs.map((run) => ({
    column: run.column,
    kind: run.kind,
    decimals: run.decimals,
    ...(run.winner.combine ? { combine: run.winner.combine } : {}),
    members: run.winner.members.map(({ family, weight }) => {
      const fitted = family.fit(run.data, { info, ...context(run.column, family, n, true) });
      // The report describes the stored model, not the last backtest fit.
      if (run.winner.members.length === 1) run.winner.description = fitted.describe();
      return { family: family.name, weight, state: fitted.state };
    }),
    widths: run.kind === 'numeric' ? widthsOf(run, backtest) : null,
  }));
  const engine: EngineState = {
    version: 1,
    series: placement.series,
    features: space,
    inputColumns: analysis.columns.filter((c) => c.role === 'input' || c.role === 'date').map((c) => c.name),
    outputs: outputStates,
  };
  const model: TrainedModelV2 = JSON.parse(JSON.stringify({ version: 2, params, engine })) as TrainedModelV2;

  const index = new Map<string, number>();
  input.header.forEach((name, i) => {
    if (!index.has(name)) index.set(name, i);
  });
  const rows: RowToPredict[] = placement.targets.map((t) => ({
    read: (column) => {
      const i = index.get(column);
      return i === undefined ? undefined : t.cells[i];
    },
    date: t.date,
    time: t.time,
  }));
  const predicted = predictRows(model.engine as EngineState, params, input.header, rows);
  const forecasts = placement.targets.map((t, i) => ({ rowIndex: t.rowIndex, ...(predicted[i] as (typeof predicted)[number]) }));
  progress.done(0);

  const trainMs = performance.now() - started;
  const deviationTarget = familyParamsResolved.deviationTarget;
  const hasNetwork = runs.some((r) => r.winner.members.some((m) => m.family.name === 'network'));
  const layersCreated = hasNetwork ? hiddenLayerCount(params.layersRequested, n) : 0;
  const width = hiddenLayerWidth(names.length, 1);
  return {
    model,
    forecasts,
    selection: {
      modelFamily: 'auto',
      scheme: backtest.scheme,
      windows: backtest.splits.length,
      horizon: info.horizon,
      frequency: info.timeOrdered ? info.frequency : 'none',
      season: info.season,
      periods: info.periods,
      ...timeNotesOf(analysis, info),
      outputs: runs.map(selectionOf),
    },
    metrics: metricsOf(runs, backtest),
    successRate: successRateOf(runs, backtest, deviationTarget),
    figures: {
      neurons: layersCreated * width,
      inputs: names.length,
      outputs: runs.reduce((sum, r) => sum + (r.kind === 'numeric' ? 1 : new Set(r.data.target as string[]).size), 0),
      layersRequested: params.layersRequested !== undefined && params.layersRequested > 0 ? params.layersRequested : layersCreated,
      layersCreated,
    },
    timing: { trainMs, samples: n, epochs: 0, samplesEpochsPerSecond: 0 },
  };
}

/** What the status record says about the time axis beyond its frequency: repeated stamps and gaps (none: no field). */
function timeNotesOf(analysis: Analysis, info: SeriesInfo): { timeNotes?: string[] } {
  if (!info.timeOrdered) return {};
  const { duplicates, missingSteps } = analysis.timeReport;
  const notes: string[] = [];
  if (duplicates > 0) notes.push(`${duplicates} repeated timestamp${duplicates === 1 ? '' : 's'}: kept the last row of each`);
  if (missingSteps > 0) notes.push(`${missingSteps} missing step${missingSteps === 1 ? '' : 's'} between known rows (gaps left as they are)`);
  return notes.length > 0 ? { timeNotes: notes } : {};
}

/** The widths of the stored model, and (on the run, for the report) their held-out coverage on the backtest. */
function widthsOf(run: OutputRun, backtest: Backtest) {
  const actual = run.data.target as number[];
  const steps = Math.max(1, backtest.horizon);
  const windows: WindowErrors[] = backtest.splits.map((split, s) => ({
    rows: split.test,
    steps: split.steps,
    errors: split.test.map((row, j) => ((run.winner.predictions[s] as number[])[j] as number) - (actual[row] as number)),
  }));
  run.coverage = heldOutCoverage(windows, steps);
  return intervalWidths(errorsByStep(windows, steps));
}

function selectionOf(run: OutputRun): OutputSelection {
  const naive = bestNaive(run.scored);
  return {
    column: run.column,
    kind: run.kind,
    metric: run.kind === 'numeric' ? 'MAE' : 'error rate',
    chosen: run.winner.members.length > 1 ? 'combination' : (run.winner.members[0] as { family: ModelFamily }).family.name,
    description: run.winner.description,
    error: run.winner.error,
    baseline: { name: naive?.family.name ?? 'none', error: naive?.error ?? run.winner.error },
    candidates: run.scored.map((s) => ({
      name: s.family.name,
      description: s.description,
      error: s.error,
      ...(s.note ? { note: s.note } : {}),
    })),
    ...(run.coverage ? { intervalCoverage: { p80: run.coverage.p80, p95: run.coverage.p95, rows: run.coverage.rows } } : {}),
  };
}

/** Backtest figures of the winners (several outputs: the mean of the per-output figures). */
function metricsOf(runs: OutputRun[], backtest: Backtest): TrainingResult['metrics'] {
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const validationRows = backtest.splits.reduce((sum, s) => sum + s.test.length, 0);
  const trainingRows = runs[0]?.data.time.length ?? 0;
  const pairs = (run: OutputRun, predictions: (number | string)[][]) =>
    backtest.splits.flatMap((split, s) => split.test.map((row, j) => [(predictions[s] as (number | string)[])[j], run.data.target[row]] as [number | string, number | string]));
  const numeric = runs.filter((r) => r.kind === 'numeric');
  if (numeric.length === 0) {
    const rate = (pick: (r: OutputRun) => (number | string)[][] | null) =>
      mean(runs.map((r) => mean(pairs(r, pick(r) ?? r.winner.predictions).map(([p, a]) => (p === a ? 0 : 1)))));
    const mae = rate((r) => r.winner.predictions);
    const baselineMae = rate((r) => bestNaive(r.scored)?.predictions ?? null);
    return { mae, rmse: Math.sqrt(mae), mape: null, baselineMae, baselineRmse: Math.sqrt(baselineMae), validationRows, trainingRows };
  }
  const figures = numeric.map((r) => {
    const errors = pairs(r, r.winner.predictions).map(([p, a]) => [(p as number) - (a as number), a as number] as const);
    const naive = pairs(r, bestNaive(r.scored)?.predictions ?? r.winner.predictions).map(([p, a]) => (p as number) - (a as number));
    const pct = errors.filter(([, a]) => a !== 0).map(([e, a]) => Math.abs(e / a) * 100);
    return {
      mae: mean(errors.map(([e]) => Math.abs(e))),
      rmse: Math.sqrt(mean(errors.map(([e]) => e * e))),
      mape: pct.length > 0 ? mean(pct) : null,
      baselineMae: mean(naive.map(Math.abs)),
      baselineRmse: Math.sqrt(mean(naive.map((e) => e * e))),
    };
  });
  const mapes = figures.map((f) => f.mape).filter((m): m is number => m !== null);
  return {
    mae: mean(figures.map((f) => f.mae)),
    rmse: mean(figures.map((f) => f.rmse)),
    mape: mapes.length > 0 ? mean(mapes) : null,
    baselineMae: mean(figures.map((f) => f.baselineMae)),
    baselineRmse: mean(figures.map((f) => f.baselineRmse)),
    validationRows,
    trainingRows,
  };
}

/**
 * % of backtest predictions (row x output) within deviationTarget% of the actual (if the actual is 0: of the
 * output's range); categorical: exact class match. The documented meaning of the training's success_rate.
 */
function successRateOf(runs: OutputRun[], backtest: Backtest, target: number): number {
  let cells = 0;
  let ok = 0;
  for (const run of runs) {
    const actual = run.data.target as (number | string)[];
    const numbers = run.kind === 'numeric' ? (actual as number[]) : [];
    const range = numbers.length > 0 ? numbers.reduce((a, b) => Math.max(a, b), -Infinity) - numbers.reduce((a, b) => Math.min(a, b), Infinity) : 0;
    backtest.splits.forEach((split, s) =>
      split.test.forEach((row, j) => {
        const p = (run.winner.predictions[s] as (number | string)[])[j] as number | string;
        const a = actual[row] as number | string;
        cells++;
        if (typeof a === 'number') {
          const reference = a !== 0 ? Math.abs(a) : range;
          if (Math.abs((p as number) - a) <= (target / 100) * reference) ok++;
        } else if (p === a) ok++;
      }),
    );
  }
  return cells === 0 ? 0 : Math.max(0, Math.min(100, Math.round((100 * ok) / cells)));
}
