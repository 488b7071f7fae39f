/**
 * One series from upload to forecast (a module of its own so a panel runs it per series):
 * prepareSeries reads and places it and cuts its backtest windows, scoreSeries backtests the families
 * (scoreCandidates) and picks each output's winner (chooseWinners), finishSeries refits the winners, forecasts and
 * reports. forecastSeries runs the three; a panel's series score, then choose across the panel, then finish.
 */
import { createHash } from 'node:crypto';
import type { CellReader } from '../core/encoder.js';
import { featureNames, featureScales, featuresOf, fitFeatureSpace, fitLaggedInputs, type FeatureSpaceState } from '../core/features.js';
import { kFold, rollingOrigin, WINDOWS, type Backtest } from '../selection/backtest.js';
import { familyRows, predictRows, type EngineState, type OutputState, type RowToPredict } from './forecaster.js';
import { errorsByStep, heldOutCoverage, intervalWidths } from '../selection/intervals.js';
import { hiddenLayerWidth } from '../legacy/brain-network.js';
import { DEFAULT_DEVIATION_TARGET, DEFAULT_LEARNING_RATE, hiddenLayerCount } from '../legacy/legacy.js';
import { familiesFor } from '../models/candidates.js';
import { aboveZero, longestPeriod, type FamilyParams, type FitRows, type FittedModel, type ModelFamily, type PredictRows, type SeriesInfo } from '../models/model.js';
import { weighEvidence } from './evidence.js';
import { guardedFinalFit, implausiblePath, type FinalMember } from './path-guard.js';
import { ProgressReporter, type EngineHooks } from '../core/progress.js';
import { chooseWinner, POOLED_ONLY, pooledWinners, scoreFamilies, splitActuals, type Scored, type SelectionOptions, type Winner } from '../selection/selection.js';
import { invalid, type Analysis } from '../core/series.js';
import { place, type Placement } from './series-place.js';
import { metricsOf, notesOf, selectionOf, successRateOf, windowErrorsOf, type OutputRun } from './series-report.js';
import type { ColumnSpec, TrainedModelV2, TrainingInput, TrainingParams, TrainingResult } from '../core/types.js';
import { countDecimals, parseNumber } from '../core/values.js';

/** Default epoch cap of a network fit (brain `iterations`), as the legacy engine's budget. */
export const DEFAULT_EPOCHS = 2000;

/**
 * The seed of one fit: of the run's seed and what the fit is (output, family, rows, final refit), never of
 * which other families ran before it, so adding or removing a family changes no other family's forecast.
 */
function fitSeed(seed: number, column: string, family: string, fitRows: number, final: boolean): number {
  return createHash('sha256').update(JSON.stringify([seed, column, family, fitRows, final])).digest().readUInt32LE(0);
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

export type { OutputRun } from './series-report.js';

/**
 * Shares one progress bar among many fits (and, for a panel, many series): each fit claims its cost in
 * work units when it starts and reports the share it has done.
 */
export class WorkMeter {
  private done = 0;
  private readonly reporter: ProgressReporter;
  constructor(total: number, hooks: EngineHooks) {
    this.reporter = new ProgressReporter(Math.max(1, total), hooks);
  }
  claim(cost: number): (share: number) => void {
    const base = this.done;
    this.done += cost;
    return (share) => this.reporter.epoch(base + Math.min(1, Math.max(0, share)) * cost, 0);
  }
  finish(): void {
    this.reporter.done(0);
  }
}

/** Which families compete for an output: the whole registry (one series) or a panel's cheaper set. */
export type FamilyChoice = (kind: 'numeric' | 'categorical', info: SeriesInfo, n: number) => ModelFamily[];

/** An upload read and placed on its time axis, with its backtest windows: everything before any fit. */
export interface PreparedSeries {
  input: TrainingInput;
  analysis: Analysis;
  placement: Placement;
  params: TrainingParams & { seed: number };
  familyParams: FamilyParams;
  names: string[];
  space: ReturnType<typeof fitFeatureSpace>;
  features: number[][];
  backtest: Backtest;
  plan: { col: ColumnSpec; families: ModelFamily[] }[];
  /** How the winner is chosen among the scored candidates (the series plan's). */
  selection: SelectionOptions;
  /** Work units of every fit this series will run (the progress bar's share). */
  cost: number;
}

/** How a panel cuts its work per series (a job in parts may score each series on another thread or process): its families and backtest windows. */
export interface SeriesPlan {
  choose: FamilyChoice;
  windows: number;
  /**
   * Whether a series gets more windows where `windows` would span less than one cycle of its longest learnable
   * period, as many as span one (a daily series of two years or more, h 28: 14 windows rather than 3). Three
   * windows of 28 days sample one stretch of the year, and a dozen families ranked there are ranked by that stretch.
   */
  cycleWindows?: boolean;
  /** Options of the winner's choice (selection.ts chooseWinner); none: one series' defaults. */
  selection?: SelectionOptions;
}

/**
 * The features of a series: fitted on its known rows (features.ts). A stated input with no future
 * (analysis.pastInputs) is read `horizon` steps back on the series' time axis: no row to forecast within the
 * horizon, and no backtest row (its windows are the horizon long), reads a value it would not know. Without
 * such a column the state and the features are exactly those of before.
 */
function featureSpaceOf(analysis: Analysis, placement: Placement): { space: FeatureSpaceState; features: number[][] } {
  const { info, knownTimes, targets } = placement;
  const space = fitFeatureSpace(analysis, info.timeOrdered);
  const exogenous = (full: FeatureSpaceState) =>
    analysis.known.map((i, k) => featuresOf(full, analysis.readers[i] as CellReader, analysis.timeline[i] ?? null, knownTimes[k] ?? null));
  if (analysis.pastInputs.length === 0) return { space, features: exogenous(space) };
  const lag = info.horizon;
  const needFrom = targets.reduce((m, t) => Math.min(m, t.time), Infinity) - lag;
  const { full, stored } = fitLaggedInputs(analysis, analysis.pastInputs, knownTimes, lag, needFrom);
  if (full.length === 0) return { space, features: exogenous(space) };
  // The known rows read the whole history; the stored state keeps what the rows to forecast read.
  return { space: { ...space, lagged: stored }, features: exogenous({ ...space, lagged: full }) };
}

export function prepareSeries(input: TrainingInput, analysis: Analysis, seed: number, plan: SeriesPlan = { choose: (kind) => familiesFor(kind), windows: WINDOWS }): PreparedSeries {
  checkParams(input.params);
  const params = { ...input.params, seed };
  const placement = place(input, analysis);
  const { info, knownTimes } = placement;
  const { space, features } = featureSpaceOf(analysis, placement);
  const names = featureNames(space);
  const n = analysis.known.length;
  const minFit = Math.max(4, Math.min(2 * info.season + 2, Math.floor(n / 2)));
  const windowCount = plan.cycleWindows ? Math.max(plan.windows, Math.ceil(longestPeriod(info) / info.horizon)) : plan.windows;
  const backtest: Backtest = info.timeOrdered ? rollingOrigin(knownTimes, info.horizon, minFit, windowCount) : kFold(n, seed);
  if (backtest.splits.length === 0) throw invalid(`Too few known rows to test a model: ${n}`);
  const selection = plan.selection ?? {};
  const outputs = analysis.columns
    .filter((c) => c.role === 'output')
    .map((col) => ({ col, families: withoutUnfitFamilies([...plan.choose(col.kind, info, n), ...poolingFamilies(col, selection)], col, analysis, info, selection, space) }));
  // Weighted by each family's own cost estimate, over the families that apply, so Advance moves evenly.
  const windows = backtest.splits.length;
  const cost = outputs.reduce(
    (sum, p) => sum + p.families.filter((f) => f.applies(info, n)).reduce((s, f) => s + f.cost(info, n, false) * windows + f.cost(info, n, true), 0),
    0,
  );
  return { input, analysis, placement, params, familyParams: familyParams(params), names, space, features, backtest, plan: outputs, selection, cost };
}

/**
 * Families a series tries only where its plan chooses across many series (SelectionOptions.pooled; FamilyTraits
 * tried 'pooled'): auto.arima's differencing and the families on logarithms. Last in the list, so ties go to the
 * families before them.
 */
function poolingFamilies(col: ColumnSpec, selection: SelectionOptions): ModelFamily[] {
  return selection.pooled ? familiesFor(col.kind, 'pooled') : [];
}

/**
 * An output's families less those the series gives no ground for: those that model known drivers (FamilyTraits
 * readsDrivers) on a series with none or with no time axis, those fitted on logarithms (FamilyTraits
 * positiveOnly) on a series with a value at or below zero, and where the plan asks (SelectionOptions
 * onlyWhereAdmitted), those whose own test (ModelFamily.admits) the series fails.
 */
function withoutUnfitFamilies(families: ModelFamily[], col: ColumnSpec, analysis: Analysis, info: SeriesInfo, selection: SelectionOptions, space: FeatureSpaceState): ModelFamily[] {
  // Known drivers: the user's inputs filled in the rows to forecast (a lagged input is its own past, not a driver);
  // the families that model them are time-series models (tabular rows have every family that reads inputs already).
  const drivers = space.numeric.length + space.categorical.length;
  if (drivers === 0 || !info.timeOrdered) families = families.filter((f) => !f.traits?.readsDrivers);
  const asks = families.some((f) => f.traits?.positiveOnly) || selection.onlyWhereAdmitted;
  if (!asks || col.kind !== 'numeric' || !info.timeOrdered) return families;
  const values = analysis.known.map((i) => parseNumber((analysis.readers[i] as CellReader)(col.name)) as number);
  const positive = aboveZero(values);
  const unfit = (f: ModelFamily) => (f.traits?.positiveOnly && !positive) || (selection.onlyWhereAdmitted && f.admits && !f.admits(values, info));
  return families.filter((f) => !unfit(f));
}

/** The target values of an output on the known rows (numbers, or trimmed labels). */
export function targetOf(prep: PreparedSeries, col: ColumnSpec): number[] | string[] {
  const cells = prep.analysis.known.map((i) => (prep.analysis.readers[i] as CellReader)(col.name) ?? '');
  return col.kind === 'numeric' ? cells.map((c) => parseNumber(c) as number) : cells.map((c) => c.trim());
}

function fitContext(prep: PreparedSeries, meter: WorkMeter) {
  const { info } = prep.placement;
  const scales = featureScales(prep.space);
  return (column: string, family: ModelFamily, fitRows: number, final = false) => ({
    seed: fitSeed(prep.params.seed, column, family.name, fitRows, final),
    params: prep.familyParams,
    featureNames: prep.names,
    featureScales: scales,
    final,
    progress: meter.claim(family.cost(info, fitRows, final)),
  });
}

/** An output's candidates scored on the series' backtest windows, before its winner is chosen. */
export type ScoredRun = Omit<OutputRun, 'winner' | 'coverage'>;

/** An output of the series as its families see it: its target on the known rows, and the decimals it forecasts with. */
export function outputRun(prep: PreparedSeries, col: ColumnSpec): Omit<ScoredRun, 'scored'> {
  const cells = prep.analysis.known.map((i) => (prep.analysis.readers[i] as CellReader)(col.name) ?? '');
  const data: FitRows = { time: prep.placement.knownTimes, features: prep.features, target: targetOf(prep, col) };
  const decimals = col.kind === 'numeric' ? cells.reduce((m, c) => Math.max(m, countDecimals(c)), 0) : 0;
  return { column: col.name, kind: col.kind, decimals, data };
}

/** Backtests every family of the plan, plus any candidates scored elsewhere (a panel's global model). */
export function scoreCandidates(prep: PreparedSeries, meter: WorkMeter, extra: (column: string) => Scored[] = () => []): ScoredRun[] {
  const context = fitContext(prep, meter);
  return prep.plan.map(({ col, families }) => {
    const run = outputRun(prep, col);
    const scored = [...scoreFamilies(families, run.data, prep.backtest, prep.placement.info, (family, fitRows) => context(col.name, family, fitRows)), ...extra(col.name)];
    return { ...run, scored };
  });
}

/** Each output's winner among its scored candidates; the value columns of a wide upload choose together where the plan asks. */
export function chooseWinners(prep: PreparedSeries, runs: ScoredRun[]): OutputRun[] {
  const chosen = runs.map((run) => {
    const { winner, note } = ownWinner(prep, run, run.scored);
    return { ...run, winner, ...(note ? { notes: [note] } : {}) };
  });
  return prep.selection.pooled && prep.placement.info.timeOrdered ? withPooledWinners(chosen, prep) : chosen;
}

/**
 * An output's own winner among `scored`: the backtest's choice (selection.ts chooseWinner), then, on a yearly or
 * quarterly series, the simple reference where the evidence for that choice is weak (evidence.ts).
 */
function ownWinner(prep: PreparedSeries, run: ScoredRun, scored: Scored[]): { winner: Winner; note?: string } {
  const own = chooseWinner(scored, prep.backtest, run.data, run.kind, prep.selection);
  return run.kind === 'numeric' ? weighEvidence(own, scored, prep.backtest, run.data, prep.placement.info) : { winner: own };
}

/** Backtests the candidates and picks each output's winner (scoreCandidates, then chooseWinners). */
function scoreSeries(prep: PreparedSeries, meter: WorkMeter, extra: (column: string) => Scored[] = () => []): OutputRun[] {
  return chooseWinners(prep, scoreCandidates(prep, meter, extra));
}

/**
 * A wide upload's numeric outputs, each a series on the same windows, choose one structure together
 * (selection.ts pooledWinners) where there are enough of them; otherwise each keeps its own winner.
 */
function withPooledWinners(runs: OutputRun[], prep: PreparedSeries): OutputRun[] {
  const numeric = runs.filter((r) => r.kind === 'numeric');
  const winners = pooledWinners(
    numeric.map((r) => ({ scored: r.scored, actual: splitActuals(prep.backtest, r.data.target as number[]), scale: naiveScale(r.data.target as number[]) })),
    prep.selection,
  );
  if (!winners) return runs;
  return runs.map((r) => (r.kind === 'numeric' ? acrossSeries(r, winners[numeric.indexOf(r)] as Winner) : r));
}

/** An output run answered by a structure chosen across series: its own choice's notes no longer apply. */
export function acrossSeries(run: OutputRun, winner: Winner): OutputRun {
  const answered: OutputRun = { ...run, winner };
  delete answered.notes;
  return answered;
}

/** MAE of the one-step naive on the known values: the scale of a series' errors (MASE's denominator); 0 when they never change. */
export function naiveScale(y: number[]): number {
  let sum = 0;
  for (let i = 1; i < y.length; i++) sum += Math.abs((y[i] as number) - (y[i - 1] as number));
  return y.length > 1 ? sum / (y.length - 1) : 0;
}

/**
 * An output's winner refitted on every known row for its stored model, with its final path guarded
 * (path-guard.ts): a numeric output on a time axis whose winner forecasts what its history rules out gets the next
 * choice among its other candidates, and its notes say so.
 */
function finalFit(prep: PreparedSeries, run: OutputRun, rows: PredictRows, fitFamily: (family: ModelFamily) => FittedModel): { run: OutputRun; members: FinalMember[] } {
  const fitted = new Map<string, FittedModel>();
  const fit = (family: ModelFamily) => {
    const model = fitted.get(family.name) ?? fitFamily(family);
    fitted.set(family.name, model);
    return model;
  };
  const { info, series } = prep.placement;
  const guarded = run.kind === 'numeric' && info.timeOrdered;
  const history = run.data.target as number[];
  const steps = rows.time.map((t) => t - series.lastTime);
  const weighed: string[] = [];
  const { winner, members, notes } = guardedFinalFit(
    run.winner,
    (excluded) => {
      const rest = run.scored.filter((s) => !excluded.has(s.family.name));
      if (!rest.some((s) => s.error !== null && Number.isFinite(s.error) && !POOLED_ONLY.has(s.family.name))) return null;
      const next = ownWinner(prep, run, rest);
      if (next.note) weighed.push(next.note);
      return next.winner;
    },
    fit,
    (path, of, driven) => (guarded ? implausiblePath(history, path, steps, of, driven) : null),
    guarded ? rows : { time: [], features: [] },
  );
  // The report describes the stored model, not the last backtest fit.
  const only = members.length === 1 ? (members[0] as FinalMember).fitted.describe() : null;
  const description = only === null ? winner.description : winner.across ? `${only} (chosen across ${winner.across.series} series)` : only;
  const drivers = driversNote(prep, run, members);
  const said = [...(run.notes ?? []), ...notes, ...weighed, ...(drivers ? [drivers] : [])];
  const effects = members.flatMap((m) => (m.family.traits?.readsDrivers && m.fitted.effects ? [{ family: m.family.name, effects: m.fitted.effects() }] : []));
  return { run: { ...run, winner: { ...winner, description }, ...(said.length > 0 ? { notes: said } : {}), ...(effects.length > 0 ? { drivers: effects } : {}) }, members };
}

/**
 * What the known drivers did, where a series has some: the effects each answered member that reads them fitted (a
 * lone member's own description already names them), or that none of the answer reads them and how the best
 * candidate that does scored (the first thing a user of a price or capacity driver asks).
 */
function driversNote(prep: PreparedSeries, run: OutputRun, members: FinalMember[]): string | null {
  const drivers = [...prep.space.numeric.map((f) => f.column), ...prep.space.categorical.map((f) => f.column)];
  // Tabular rows have no family that models drivers on a time axis: every family there reads the inputs.
  if (drivers.length === 0 || run.kind !== 'numeric' || !prep.placement.info.timeOrdered) return null;
  const named = `known driver${drivers.length === 1 ? '' : 's'} ${drivers.map((d) => `'${d}'`).join(', ')}`;
  const readers = members.filter((m) => m.family.traits?.readsDrivers);
  if (readers.length > 0) {
    if (members.length === 1) return null;
    return `${named}: ${readers.map((m) => `${m.family.name} (weight ${m.weight.toFixed(2)}): ${m.fitted.describe()}`).join('; ')}`;
  }
  const best = run.scored
    .filter((s) => s.family.traits?.readsDrivers && s.error !== null && Number.isFinite(s.error))
    .sort((a, b) => (a.error as number) - (b.error as number))[0];
  const figure = (x: number) => String(Number(x.toPrecision(4)));
  if (!best) return `${named}: not used, no model that reads them could be fitted on this series`;
  return `${named}: not in the answer; the best candidate that reads ${drivers.length === 1 ? 'it' : 'them'}, ${best.family.name}, scored ${figure(best.error as number)} on the backtest against the answer's ${figure(run.winner.error)}`;
}

/** Refits the winners on every known row, forecasts the rows to forecast, and reports (with the runs as answered). */
export function finishSeries(prep: PreparedSeries, chosen: OutputRun[], meter: WorkMeter, started: number): { result: TrainingResult; runs: OutputRun[] } {
  const { input, analysis, placement, params, backtest, space, names } = prep;
  const { info } = placement;
  const n = analysis.known.length;
  const context = fitContext(prep, meter);
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
  const targetRows = familyRows({ series: placement.series, features: space }, rows);
  const steps = Math.max(1, backtest.horizon);
  const finals = chosen.map((run) => {
    const final = finalFit(prep, run, targetRows, (family) => family.fit(run.data, { info, ...context(run.column, family, n, true) }));
    // The stored bands' widths and, for the report, their held-out coverage: both from the winner's window errors.
    const windows = final.run.kind === 'numeric' ? windowErrorsOf(final.run, backtest) : null;
    return { ...final, windows, run: windows ? { ...final.run, coverage: heldOutCoverage(windows, steps) } : final.run };
  });
  const outputStates: OutputState[] = finals.map(({ run, members, windows }) => ({
    column: run.column,
    kind: run.kind,
    decimals: run.decimals,
    ...(run.winner.combine ? { combine: run.winner.combine } : {}),
    members: members.map(({ family, weight, fitted }) => ({ family: family.name, weight, state: fitted.state })),
    widths: windows ? intervalWidths(errorsByStep(windows, steps)) : null,
  }));
  const runs = finals.map(({ run }) => run);
  const engine: EngineState = {
    version: 1,
    series: placement.series,
    features: space,
    inputColumns: analysis.columns.filter((c) => c.role === 'input' || c.role === 'date').map((c) => c.name),
    outputs: outputStates,
  };
  const model: TrainedModelV2 = JSON.parse(JSON.stringify({ version: 2, params, engine })) as TrainedModelV2;
  const predicted = predictRows(model.engine as EngineState, params, input.header, rows);
  const forecasts = placement.targets.map((t, i) => ({ rowIndex: t.rowIndex, ...(predicted[i] as (typeof predicted)[number]) }));

  const trainMs = performance.now() - started;
  const deviationTarget = prep.familyParams.deviationTarget;
  const hasNetwork = runs.some((r) => r.winner.members.some((m) => m.family.name === 'network'));
  const layersCreated = hasNetwork ? hiddenLayerCount(params.layersRequested, n) : 0;
  const width = hiddenLayerWidth(names.length, 1);
  const result: TrainingResult = {
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
      ...notesOf(analysis, info, space),
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
  return { result, runs };
}

export function forecastSeries(input: TrainingInput, analysis: Analysis, hooks: EngineHooks, seed: number, plan?: SeriesPlan): TrainingResult {
  const started = performance.now();
  const prep = prepareSeries(input, analysis, seed, plan);
  const meter = new WorkMeter(prep.cost, hooks);
  const runs = scoreSeries(prep, meter);
  const { result } = finishSeries(prep, runs, meter, started);
  meter.finish();
  return result;
}
